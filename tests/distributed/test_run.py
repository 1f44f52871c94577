"""The distributed check for real: one rank in-process over gloo; two ranks started with Slurm's variables
alone (no torchrun) whose environments and locks differ; a rank that never starts, one that dies after
joining, a rank 0 that is not there; two ranks under torchrun through `smoke --distributed` and `check
--distributed`; the refusals (no launcher, options that do not apply)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from envguard.distributed.exchange import SLOT
from envguard.distributed.launcher import PORT_BASE, PORT_SPAN
from envguard.distributed.records import RankReport
from envguard.distributed.run import run_distributed_check
from envguard.smoke.envguard_smoke.memory_limit import RESERVE, mapped_bytes
from tests.helpers import REPO, MakePrefix, envguard

TORCHRUN = Path(sys.executable).parent / "torchrun"
LAUNCHER_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_")
NODELIST = "localhost,node[002-004]"  # the first host is this one
DIES_AFTER_JOINING = """\
import os
from envguard.distributed.launcher import detect
from envguard.distributed.rendezvous import connect
connect(detect(os.environ), 60.0)
os._exit(1)
"""


def bare_environ() -> dict[str, str]:
    """This process's environment without any launcher's variables."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("SLURM_", "OMPI_", "PMI_", *LAUNCHER_VARIABLES))
    }


def free_job_id() -> int:
    """A Slurm job id whose derived rendezvous port is free on this machine now."""
    for job in range(90_000 + os.getpid() % PORT_SPAN, 90_000 + os.getpid() % PORT_SPAN + PORT_SPAN):
        with socket.socket() as sock:
            try:
                sock.bind(("", PORT_BASE + job % PORT_SPAN))
            except OSError:
                continue
        return job
    raise AssertionError("no free port in the derived range")


def slurm(rank: int, world: int, job: int) -> dict[str, str]:
    """What srun sets for one task of a single-node step (and nothing else: no torchrun, no MASTER_*)."""
    return {
        **bare_environ(),
        "SLURM_PROCID": str(rank),
        "SLURM_LOCALID": str(rank),
        "SLURM_NTASKS": str(world),
        "SLURM_JOB_ID": str(job),
        "SLURM_JOB_NODELIST": NODELIST,
    }


def start(argv: list[str], environ: Mapping[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv, env=dict(environ), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def check_rank(*argv: str) -> list[str]:
    return [sys.executable, "-m", "envguard", "check", "--distributed", *argv]


def test_single_rank_gathers_over_gloo(make_prefix: MakePrefix, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    environ = slurm(0, 1, free_job_id())
    result = run_distributed_check(str(prefix), probe=False, environ=environ)
    (only,) = result.ranks
    assert result.world_size == 1 and result.rank == 0
    assert isinstance(only, RankReport) and only.prefix == str(prefix) and only.local_rank == 0
    assert {f.status for f in result.findings} == {"PASS"}
    assert result.wire is not None and result.wire.launcher == "Slurm" and result.wire.detail_ranks == ()
    assert result.wire.rendezvous.startswith("localhost:")


@pytest.mark.slow
def test_two_slurm_ranks_name_the_other_ranks_package_and_lock(
    make_prefix: MakePrefix, tmp_path: Path
) -> None:
    first = make_prefix(["python=3.11", "numpy=1.26"], name="a")
    second = make_prefix(["python=3.11", "numpy=2.0"], name="b")
    locks = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        locks.append(tmp_path / name / "conda-lock.yml")
        locks[-1].write_text(f"# the lock of host {name}\n")
    job = free_job_id()
    ranks = [
        start(check_rank(str(prefix), "--lock", str(lock), "--json"), slurm(rank, 2, job), tmp_path)
        for rank, (prefix, lock) in enumerate(zip((first, second), locks, strict=True))
    ]
    (code0, out0, err0), (code1, out1, err1) = (finish(p) for p in ranks)
    assert (code0, code1) == (1, 1), err0[-2000:] + err1[-2000:]
    assert out1 == ""  # only rank 0 prints
    report = json.loads(out0)
    assert report["launcher"] == "Slurm" and f"from SLURM_JOB_ID {job}" in report["rendezvous"]
    assert report["rendezvous"].startswith("localhost:")
    host = socket.gethostname()
    found = {(f["category"], f["check"]): f for f in report["findings"]}
    env = found[("environment across ranks", f"rank 1 on {host}")]
    assert env["status"] == "FAIL" and "numpy 1.26.4" in env["evidence"] and "-> 2.0.1" in env["evidence"]
    lock = found[("lock across ranks", f"rank 1 on {host}")]
    assert (
        lock["status"] == "FAIL" and str(locks[1]) in lock["evidence"] and str(locks[0]) in lock["evidence"]
    )
    assert report["wire"]["detail_ranks"] == [0, 1] and report["wire"]["summary_bytes"] == SLOT
    assert all(
        isinstance(r["packages"], int) for r in report["ranks"]
    )  # counts: no list crossed to every rank


@pytest.mark.slow
def test_a_rank_that_never_starts_is_named_within_the_timeout(
    make_prefix: MakePrefix, tmp_path: Path
) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    job = free_job_id()
    code, out, err = finish(start(check_rank(str(prefix), "--timeout", "3"), slurm(0, 2, job), tmp_path))
    assert code == 3 and out == ""
    (line,) = err.strip().splitlines()
    port = PORT_BASE + job % PORT_SPAN
    assert line.startswith(
        f"envguard: error: 1 of 2 ranks did not report within 3 s: rank 1 never reached the rendezvous at "
        f"localhost:{port} (first host of SLURM_JOB_NODELIST, port {port} from SLURM_JOB_ID {job})"
    )


@pytest.mark.slow
def test_a_rank_that_dies_after_joining_is_named(make_prefix: MakePrefix, tmp_path: Path) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    job = free_job_id()
    # rank 1 first: it retries until rank 0 serves the store, joins, and exits at once
    rank1 = start([sys.executable, "-c", DIES_AFTER_JOINING], slurm(1, 2, job), tmp_path)
    rank0 = start(check_rank(str(prefix), "--timeout", "10"), slurm(0, 2, job), tmp_path)
    assert finish(rank1)[0] == 1
    code, out, err = finish(rank0)
    assert code == 3 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("envguard: error: 1 of 2 ranks did not report within 10 s: ")
    assert f"rank 1 on {socket.gethostname()} joined, then stopped (died or hung while measuring)" in line


@pytest.mark.slow
def test_a_rank_without_rank_0_says_so(tmp_path: Path) -> None:
    job = free_job_id()
    code, _out, err = finish(start(check_rank("--timeout", "2"), slurm(1, 2, job), tmp_path))
    assert code == 3
    (line,) = err.strip().splitlines()
    assert f"rank 1 could not reach the rendezvous at localhost:{PORT_BASE + job % PORT_SPAN}" in line
    assert "rank 0 died, never started, or runs on another host" in line


def torchrun(*argv: str) -> subprocess.CompletedProcess[str]:
    if not TORCHRUN.exists():
        pytest.skip("torchrun is not installed next to this interpreter")
    command = [str(TORCHRUN), "--standalone", "--nproc-per-node=2", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO, check=False)


def rank0_json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    start_at = done.stdout.index("{")
    data: dict[str, Any] = json.loads(done.stdout[start_at : done.stdout.rindex("}") + 1])
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
    assert data["launcher"] == "torchrun"
    assert data["ranks"][0]["env_sha256"] == data["ranks"][1]["env_sha256"]
    assert data["shards"][0]["padding"] == 1 and data["shards"][0]["partition"] is True


RANK_SCRIPT = """\
import os, sys
from envguard.cli.app import run
rank = int(os.environ["RANK"])
sys.exit(run(["smoke", "--distributed", "--json", *sys.argv[1 + rank].split("|")]))
"""


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


@pytest.mark.slow
def test_torchrun_ranks_that_all_drifted_alike_from_the_lock_fail(
    make_prefix: MakePrefix, tmp_path: Path
) -> None:
    """`check --distributed --lock L` where every rank agrees with every other but not with L: the gate fails
    (it passed: the ranks were only compared with each other), naming the ranks, the drift, and the sync
    that fixes each host; a plain `check` of the same prefix agrees."""
    locked = make_prefix(["python=3.11", "numpy=1.26"], name="locked")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(locked), "--no-probe", "-o", str(lock)) == 0
    stale = make_prefix(["python=3.11", "numpy=2.0"], name="stale")
    assert envguard("check", str(stale), "--lock", str(lock)) == 1
    done = torchrun("-m", "envguard", "check", "--distributed", str(stale), "--lock", str(lock), "--json")
    assert done.returncode == 1, done.stderr[-2000:]
    data = rank0_json(done)
    found = {(f["category"], f["status"]): f for f in data["findings"]}
    assert found[("environment across ranks", "PASS")]  # the ranks agree with each other
    against = found[("environment against the lock", "FAIL")]
    assert against["check"].startswith("ranks 0-1 on ")
    assert str(lock) in against["evidence"] and "numpy" in against["evidence"]
    assert f"`envguard sync {stale} --lock {lock}`" in against["fix"]


def test_no_launcher_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in list(os.environ):
        if name not in bare_environ():
            monkeypatch.delenv(name)
    assert envguard("check", "--distributed") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--distributed found no launcher" in line and "srun" in line and "mpirun" in line


def test_options_that_do_not_apply(capsys: pytest.CaptureFixture[str]) -> None:
    assert envguard("check", "--timeout", "5") == 2
    assert "add --distributed" in capsys.readouterr().err
    assert envguard("check", "--distributed", "--files") == 2
    assert "drop -f, --platform, --files, --lock-fresh and --attestation" in capsys.readouterr().err
    assert envguard("check", "--distributed", "--attestation", "proof.json") == 2
    assert "--attestation (run those checks without --distributed)" in capsys.readouterr().err
    assert envguard("smoke", "--timeout", "5") == 2
    assert "add --distributed" in capsys.readouterr().err
    assert envguard("check", "--distributed", "--timeout", "0.5") == 2  # at least 1 s


def test_smoke_distributed_measures_each_rank_under_the_memory_limit(
    make_prefix: MakePrefix, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`smoke --distributed --memory-limit 6G`: the rank measures (its DataLoader over the sampler) under
    that limit (RLIMIT_DATA), as a plain smoke's module and its workers do; the option was ignored. The limit
    is 6 GiB past what the rank had mapped once torch was imported (765 MiB with the CUDA wheel)."""
    import resource

    import envguard.distributed.run as distributed_run

    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    for name in list(os.environ):
        if name not in bare_environ():
            monkeypatch.delenv(name)
    for name, value in slurm(0, 1, free_job_id()).items():
        monkeypatch.setenv(name, value)
    seen: list[int] = []
    measure = distributed_run.rank_report

    def spied(*args: Any, **kwargs: Any) -> Any:  # the room left to allocate as the rank starts measuring
        seen.append(resource.getrlimit(resource.RLIMIT_DATA)[0] - mapped_bytes())
        return measure(*args, **kwargs)

    monkeypatch.setattr(distributed_run, "rank_report", spied)
    before = resource.getrlimit(resource.RLIMIT_DATA)
    try:
        code = envguard("smoke", "--distributed", str(prefix), "--memory-limit", "6G", "--json")
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, before)
    assert len(seen) == 1 and code == 0
    assert abs(seen[0] - (6 << 30)) <= RESERVE, seen  # give or take what the rendezvous allocated since


@pytest.mark.slow
def test_a_port_that_accepts_but_never_speaks_ends_within_the_timeout(tmp_path: Path) -> None:
    """Issue 42: MASTER_PORT accepting TCP but not speaking the store protocol ran until the listener went
    away (~80 s) or was killed; every wait is bounded by --timeout now."""
    import time

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts (the kernel completes the handshake), never reads or writes
        port = silent.getsockname()[1]
        environ = {**slurm(1, 2, free_job_id()), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
        began = time.monotonic()
        code, out, err = finish(start(check_rank("--timeout", "3"), environ, tmp_path))
        took = time.monotonic() - began
    assert code == 3 and out == "", err
    (line,) = err.strip().splitlines()
    assert f"127.0.0.1:{port}" in line and "within 3 s" in line, line
    assert took < 3 + 5 + 10, took  # --timeout + 5 s, and the interpreter's start on a busy machine
