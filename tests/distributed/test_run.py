"""The distributed check for real: one rank over gloo in-process, two ranks under torchrun through `smoke
--distributed` and `check --distributed`, and the refusal outside torchrun."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envguard.distributed.records import RankReport
from envguard.distributed.run import run_distributed_check
from tests.helpers import REPO, MakePrefix, envguard

TORCHRUN = Path(sys.executable).parent / "torchrun"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_single_rank_gathers_over_gloo(make_prefix: MakePrefix, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    for name, value in {
        "RANK": "0",
        "WORLD_SIZE": "1",
        "LOCAL_RANK": "0",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
    }.items():
        monkeypatch.setenv(name, value)
    result = run_distributed_check(str(prefix), probe=False)
    (only,) = result.ranks
    assert result.world_size == 1 and result.rank == 0
    assert isinstance(only, RankReport) and only.prefix == str(prefix)
    assert {f.status for f in result.findings} == {"PASS"}


def torchrun(*argv: str) -> subprocess.CompletedProcess[str]:
    if not TORCHRUN.exists():
        pytest.skip("torchrun is not installed next to this interpreter")
    command = [str(TORCHRUN), "--standalone", "--nproc-per-node=2", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO, check=False)


def rank0_json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    start = done.stdout.index("{")
    data: dict[str, Any] = json.loads(done.stdout[start : done.stdout.rindex("}") + 1])
    return data


@pytest.mark.slow
def test_torchrun_two_ranks_same_environment(make_prefix: MakePrefix, tmp_path: Path) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    for i in range(9):
        (data_dir / f"{i}.bin").write_bytes(b"x")
    done = torchrun(
        "-m", "envguard", "smoke", "--distributed", str(prefix), "--data", str(data_dir), "--json"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count('"schema_version"') == 1  # only rank 0 prints
    data = rank0_json(done)
    assert data["world_size"] == 2 and {r["rank"] for r in data["ranks"]} == {0, 1}
    assert data["ranks"][0]["env_sha256"] == data["ranks"][1]["env_sha256"]
    assert data["shards"][0]["padding"] == 1 and data["shards"][0]["partition"] is True


RANK_SCRIPT = """\
import os, sys
from envguard.cli.app import run
rank = int(os.environ["RANK"])
sys.exit(run(["smoke", "--distributed", "--json", *sys.argv[1 + rank].split("|")]))
"""


@pytest.mark.slow
def test_torchrun_ranks_with_different_environments(make_prefix: MakePrefix, tmp_path: Path) -> None:
    first = make_prefix(["python=3.11", "numpy=1.26"], name="a")
    second = make_prefix(["python=3.11", "numpy=2.0"], name="b")
    script = tmp_path / "per_rank.py"
    script.write_text(RANK_SCRIPT)
    done = torchrun(str(script), str(first), str(second))
    assert done.returncode != 0
    found = {f["check"]: f for f in rank0_json(done)["findings"]}
    env = next(f for check, f in found.items() if check.startswith("rank 1"))
    assert env["status"] == "FAIL" and "numpy 1.26.4" in env["evidence"] and "2.0.1" in env["evidence"]


@pytest.mark.slow
def test_torchrun_ranks_with_different_data(make_prefix: MakePrefix, tmp_path: Path) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    folders = []
    for name, count in (("host_a", 10), ("host_b", 8)):
        folder = tmp_path / name
        folder.mkdir()
        for i in range(count):
            (folder / f"{i}.bin").write_bytes(b"x")
        folders.append(f"{prefix}|--data|{folder}")
    script = tmp_path / "per_rank.py"
    script.write_text(RANK_SCRIPT)
    done = torchrun(str(script), *folders)
    assert done.returncode != 0
    data = rank0_json(done)
    size = next(f for f in data["findings"] if f["check"] == "dataset size")
    assert size["status"] == "FAIL" and "rank 0: 10, rank 1: 8" in size["evidence"]
    assert os.environ.get("RANK") is None  # nothing leaked into this process


@pytest.mark.slow
def test_torchrun_check_distributed(make_prefix: MakePrefix) -> None:
    """`envguard check --distributed` under torchrun: same report shape, rank 0 alone prints, exit 0."""
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    done = torchrun("-m", "envguard", "check", "--distributed", str(prefix), "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count('"schema_version"') == 1
    data = rank0_json(done)
    assert data["world_size"] == 2 and data["ranks"][0]["env_sha256"] == data["ranks"][1]["env_sha256"]


def test_check_distributed_outside_torchrun_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert envguard("check", "--distributed") == 2
    assert "torchrun" in capsys.readouterr().err
