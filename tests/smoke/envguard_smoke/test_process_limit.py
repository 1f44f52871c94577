"""smoke's process limit (issue 42): the measuring module sets RLIMIT_NPROC before any worker starts, to the
user's tasks now plus a headroom, keeps a lower limit already in force, and every DataLoader worker inherits
it. As root the kernel does not enforce it, so what is tested is that it is set where the processes run: each
one's /proc/PID/limits."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.smoke.envguard_smoke import process_limit
from tests.helpers import REPO, MakePrefix

PLANTED = REPO / "tests" / "smoke_planted.py"
DATASET = ("--dataset", f"{PLANTED}:ReadsItsLimits", "--json")


def _soft(line: str) -> int:
    """The soft limit of a /proc/PID/limits "Max processes" line."""
    return int(line.split("Max processes", 1)[1].split()[0])


def _in_a_child(code: str) -> list[str]:
    script = f"from envguard.smoke.envguard_smoke import process_limit\n{code}\n" + (
        "print(next(x for x in open('/proc/self/limits') if x.startswith('Max processes')), end='')"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True
    )
    return done.stdout.splitlines()


def test_the_limit_is_the_users_tasks_plus_the_headroom() -> None:
    said, limits = _in_a_child("print(process_limit.apply(), process_limit.user_tasks())")
    applied, running = (int(x) for x in said.split())
    assert _soft(limits) == applied  # in force in the process that set it
    assert running <= applied - process_limit.headroom() + 50  # the tasks then, give or take other jobs
    assert applied >= running + process_limit.headroom() - 50


def test_a_lower_limit_in_force_is_kept() -> None:
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_NPROC, (100, resource.getrlimit(resource.RLIMIT_NPROC)[1]))\n"
        "print(process_limit.apply())"
    )
    said, limits = _in_a_child(code)
    assert said == "100" and _soft(limits) == 100


def test_user_tasks_counts_this_process_threads() -> None:
    assert process_limit.user_tasks() >= 1
    assert process_limit.user_tasks(uid=2**31 - 2) == 0  # nobody runs as that user


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_every_worker_of_a_smoke_run_has_the_limit(
    make_prefix: MakePrefix, tmp_path: Path, workers: str
) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    seen = tmp_path / "limits.txt"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envguard",
            "smoke",
            str(prefix),
            "--budget",
            "20",
            "--workers",
            workers,
            *DATASET,
        ],
        cwd=REPO,
        env=dict(os.environ, ENVGUARD_TEST_LIMITS=str(seen)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    lines = seen.read_text().splitlines()
    assert lines, done.stderr
    limits = {_soft(line) for line in lines}
    assert len(limits) == 1, lines  # one limit, set once, in every process that read samples
    (limit,) = limits
    expected = process_limit.user_tasks() + process_limit.headroom()  # the user's tasks then, about
    assert abs(limit - expected) < 300, (limit, expected)
    assert limit < resource.getrlimit(resource.RLIMIT_NPROC)[0], limit  # lower than this test runs under
    if workers != "0":
        assert len({line.split()[0] for line in lines}) >= 2, lines  # the workers, each with its own PID
