"""`smoke --memory-limit`: the measuring module and its DataLoader workers run under a memory limit, and a
dataset that reaches it is named as out of memory with its figure and the fix that fits, never as a crash to
debug with num_workers=0 (issue 28, finding 14). Real `envguard smoke` processes on a planted dataset that
keeps memory until an allocation fails (and stops by itself at 3 GiB, so no run of this test can fill the
machine). They pass alike with the CPU and the CUDA torch wheel: the limit is the dataset's, past what torch's
libraries map at start-up (765 MiB with the CUDA wheel, 217 MiB with the CPU one)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, MakePrefix

PLANTED = REPO / "tests" / "smoke_planted.py"
GIB = 1 << 30
STEP = 64 << 20  # what the planted Hoards keeps per sample
STEPS_BELOW = 14  # it holds at least 896 MiB of a 1 GiB limit (15 steps when nothing else allocates)


@pytest.fixture
def prefix(make_prefix: MakePrefix) -> Path:
    return make_prefix(["python=3.11", "numpy=1.26"])


def smoke(hoard: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ENVGUARD_TEST_HOARD=str(hoard))
    return subprocess.run(
        [sys.executable, "-m", "envguard", "smoke", *argv],
        cwd=REPO,
        env=env,
        text=True,
        capture_output=True,
        timeout=300,
    )


def held(hoard: Path) -> list[int]:
    """What the planted dataset held, in bytes, in each process where an allocation failed."""
    return [int(line) for line in hoard.read_text().split()] if hoard.exists() else []


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_dataset_that_reaches_the_memory_limit_is_named_out_of_memory(
    prefix: Path, tmp_path: Path, workers: str
) -> None:
    hoard = tmp_path / "hoard.txt"
    done = smoke(
        hoard,
        str(prefix),
        "--budget",
        "40",
        "--workers",
        workers,
        "--memory-limit",
        "1G",
        "--dataset",
        f"{PLANTED}:Hoards",
        "--json",
    )
    findings = out_of_memory(done)
    match = re.search(r"reached ([\d.]+) GiB \(limit ([\d.]+) GiB[,)]", findings[0]["evidence"])
    assert match, findings[0]
    reached, limit = float(match.group(1)), float(match.group(2))
    assert limit == 1.0
    assert 0.5 <= reached <= 1.5, findings[0]  # the limit stopped it, not the dataset's own 3 GiB cap
    assert "--memory-limit" in findings[0]["fix"] and "batch_size" in findings[0]["fix"], findings[0]
    # the machine was not filled: the dataset's allocation failed below the limit in every process; and the
    # dataset had the memory asked for, whatever torch's libraries map (the CUDA wheel's left it 256 MiB)
    amounts = held(hoard)
    assert amounts and all(STEPS_BELOW * STEP <= amount < GIB for amount in amounts), amounts


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_dataset_that_meets_the_limit_with_nothing_to_spare_ends_the_run_as_out_of_memory(
    prefix: Path, tmp_path: Path, workers: str
) -> None:
    """256 KiB at a time: the process that meets the limit has nothing left for the traceback, the message
    to the main process or a thread, and no process after it may be waited on until --budget (the module
    then printed nothing measured, exit 0, or named a hung sample, exit 3)."""
    hoard = tmp_path / "hoard.txt"
    done = smoke(
        hoard,
        str(prefix),
        "--budget",
        "120",
        "--workers",
        workers,
        "--memory-limit",
        "1G",
        "--dataset",
        f"{PLANTED}:Creeps",
        "--json",
    )
    findings = out_of_memory(done)
    report = json.loads(done.stdout)
    waited = [f for f in report["findings"] if f["category"] == "budget" or "--budget" in f["evidence"]]
    assert not waited, waited
    assert "throughput" not in report["phase_seconds"], report["phase_seconds"]  # nothing measured after it
    assert all(amount < GIB for amount in held(hoard)), held(hoard)
    assert "MemoryError" in findings[0]["evidence"], findings[0]


def out_of_memory(done: subprocess.CompletedProcess[str]) -> list[dict[str, str]]:
    """The findings of a run that exited 1 with one out-of-memory FAIL (and no crash hint), that one first."""
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    findings = json.loads(done.stdout)["findings"]
    oom = [f for f in findings if f["evidence"].startswith("out of memory")]
    assert len(oom) == 1 and oom[0]["status"] == "FAIL", findings
    # not the traceback hint of a crash
    assert not any("num_workers=0" in f["fix"] for f in findings), findings
    return oom + [f for f in findings if f is not oom[0]]


def test_a_bad_memory_limit_is_refused_in_one_line(prefix: Path, tmp_path: Path) -> None:
    refused = smoke(tmp_path / "hoard.txt", str(prefix), "--memory-limit", "lots")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().count("\n") == 0 and "--memory-limit lots" in refused.stderr, refused.stderr
