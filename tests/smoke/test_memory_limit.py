"""`smoke --memory-limit`: the measuring module and its DataLoader workers run under a memory limit, and a
dataset that reaches it is named as out of memory with its figure and the fix that fits, never as a crash to
debug with num_workers=0 (issue 28, finding 14). Real `envguard smoke` processes on a planted dataset that
keeps memory until an allocation fails (and stops by itself at 3 GiB, so no run of this test can fill the
machine)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, MakePrefix

CUDA_WHEEL = "+cpu" not in importlib.metadata.version("torch")  # the wheel envguard's tests run with

PLANTED = REPO / "tests" / "smoke_planted.py"
GIB = 1 << 30


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


@pytest.mark.xfail(
    CUDA_WHEEL,
    reason="known defect (issue 28): under the CUDA wheel RLIMIT_DATA counts the CUDA libraries' mappings, "
    "the dataset's MemoryError comes at 256 MiB and the memory check then waits until --budget (exit 0)",
    strict=False,
)
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
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    findings = json.loads(done.stdout)["findings"]
    oom = [f for f in findings if f["evidence"].startswith("out of memory")]
    assert len(oom) == 1, findings
    assert oom[0]["status"] == "FAIL"
    match = re.search(r"reached ([\d.]+) GiB \(limit ([\d.]+) GiB\)", oom[0]["evidence"])
    assert match, oom[0]
    reached, limit = float(match.group(1)), float(match.group(2))
    assert limit == 1.0
    assert 0.5 <= reached <= 1.5, oom[0]  # the limit stopped it, not the dataset's own 3 GiB cap
    assert "--memory-limit" in oom[0]["fix"] and "batch_size" in oom[0]["fix"], oom[0]
    # not the traceback hint of a crash
    assert not any("num_workers=0" in f["fix"] for f in findings), findings
    # the machine was not filled: the dataset's allocation failed below the limit in every process
    amounts = held(hoard)
    assert amounts and all(amount < GIB for amount in amounts), amounts


def test_a_bad_memory_limit_is_refused_in_one_line(prefix: Path, tmp_path: Path) -> None:
    refused = smoke(tmp_path / "hoard.txt", str(prefix), "--memory-limit", "lots")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().count("\n") == 0 and "--memory-limit lots" in refused.stderr, refused.stderr
