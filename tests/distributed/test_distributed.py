"""The distributed check: DistributedSampler shard analysis, and real gloo runs (in-process and under
torchrun)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envguard.distributed import run as distributed
from tests.helpers import REPO, MakePrefix

TORCHRUN = Path(sys.executable).parent / "torchrun"


def report(rank: int, world: int, size: int = 1001, seed: int = 0, **extra: Any) -> dict[str, Any]:
    """A rank's report with its real DistributedSampler shards and a fixed environment."""
    base = {
        "rank": rank,
        "host": f"node{rank}",
        "torch": "2.13.0",
        "python": "3.11.7",
        "seed": seed,
        "prefix": "/env",
        "packages": ["conda:numpy=1.26.4=py311_0", "conda:python=3.11.9=h0_0"],
        "fingerprints": {"torch_randperm": "ab"},
        "system": ["__glibc=2.36"],
        "env_sha256": "e" * 64,
        "dataset_size": size,
        "shards": distributed.shard_report(size, rank, world, seed=seed, epochs=2, loader=True),
    }
    base.update(extra)
    return base


def statuses(result: distributed.DistributedResult) -> dict[str, str]:
    return {f"{f.category}: {f.check}": f.status for f in result.findings}


def test_shards_partition_with_padding_counted() -> None:
    result = distributed.analyze([report(1, 2), report(0, 2)])
    assert set(statuses(result).values()) == {"PASS"}
    check = result.shards[0]
    assert check.padding == 1 and check.repeated == 1 and check.missing == 0 and check.partition
    assert check.shard_sizes == (501, 501)
    assert [r["rank"] for r in result.ranks] == [0, 1] and "packages" not in result.ranks[0]


def test_shards_differ_between_epochs() -> None:
    shards = report(0, 2)["shards"]
    assert shards[0]["sha256"] != shards[1]["sha256"]
    assert all(s["loader_sha256"] == s["sha256"] for s in shards)


def test_different_dataset_sizes_fail() -> None:
    found = distributed.analyze([report(0, 2, size=1001), report(1, 2, size=998)]).findings
    assert found[-1].status == "FAIL" and "rank 0: 1001, rank 1: 998" in found[-1].evidence


def test_different_seeds_fail() -> None:
    found = distributed.analyze([report(0, 2, seed=0), report(1, 2, seed=1)]).findings
    assert any(f.check == "sampler seed" and f.status == "FAIL" for f in found)


def test_shards_that_do_not_partition_fail() -> None:
    wrong = report(1, 2)
    wrong["shards"] = report(0, 2)["shards"]  # rank 1 built its sampler with rank=0
    found = [
        f
        for f in distributed.analyze([report(0, 2), wrong]).findings
        if f.category == distributed.CATEGORY_SHARDS
    ]
    assert found and all(f.status == "FAIL" for f in found) and "500 missing" in found[0].evidence


def test_environment_and_system_differences() -> None:
    other = report(
        1,
        2,
        env_sha256="f" * 64,
        packages=["conda:numpy=2.0.1=py311_0", "conda:python=3.11.9=h0_0"],
        fingerprints={"torch_randperm": "cd"},
        system=["__cuda=11.8", "__glibc=2.36"],
    )
    found = {f.check: f for f in distributed.analyze([report(0, 2), other]).findings}
    env = found["rank 1 on node1"]
    assert env.status == "FAIL" and "conda:numpy 1.26.4=py311_0 -> 2.0.1=py311_0" in env.evidence
    assert "torch_randperm" in env.evidence
    assert (
        found["rank 1 on node1 (system)"].status == "WARN"
        and "__cuda=11.8" in found["rank 1 on node1 (system)"].evidence
    )


def test_a_failing_rank_is_reported_not_hung() -> None:
    broken = {
        "rank": 1,
        "host": "node1",
        "torch": "2.13.0",
        "python": "3.11",
        "seed": 0,
        "error": "/x: no such env",
    }
    found = distributed.analyze([report(0, 2), broken]).findings
    assert [f.status for f in found] == ["FAIL"] and "/x: no such env" in found[0].evidence


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
    result = distributed.run_distributed_check(str(prefix), probe=False)
    assert result.world_size == 1 and result.rank == 0 and result.ranks[0]["prefix"] == str(prefix)
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
    from tests.helpers import envguard

    assert envguard("check", "--distributed") == 2
    assert "torchrun" in capsys.readouterr().err
