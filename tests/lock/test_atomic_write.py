"""Lock writes are atomic: a process that dies mid-write (or whose write fails) leaves the previous lock
intact.

The failure is real: the child `envguard lock` runs under RLIMIT_FSIZE smaller than the new lock, so the
kernel stops it while it writes the temp file — with SIGXFSZ at its default disposition the process is killed
mid-write; with the signal ignored (CPython's default) write(2) fails with EFBIG.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from envguard.formats.condalock import read as condalock
from tests.helpers import REPO, MakePrefix, envguard

_KILLABLE = (
    "import signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_DFL); "
    "from envguard.cli.app import main; main(sys.argv[1:])"
)


def _limited(limit: int) -> Callable[[], None]:
    def setup() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return setup


def _previous_lock(make_prefix: MakePrefix, tmp_path: Path) -> tuple[Path, Path, bytes]:
    prefix = make_prefix(["zlib"])
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    before = lock.read_bytes()
    make_prefix(
        ["python=3.11", "numpy=1.26", "six", "requests", "pip", "zlib"]
    )  # the env grows: a bigger lock
    return prefix, lock, before


def _run_lock(prefix: Path, lock: Path, limit: int, killable: bool) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    start = ["-c", _KILLABLE] if killable else ["-m", "envguard"]
    return subprocess.run(
        [sys.executable, *start, "lock", str(prefix), "--no-probe", "-o", str(lock)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=_limited(limit),
        check=False,
    )


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs POSIX file-size limits")
def test_killed_mid_write_leaves_previous_lock_intact(make_prefix: MakePrefix, tmp_path: Path) -> None:
    prefix, lock, before = _previous_lock(make_prefix, tmp_path)
    limit = len(before) + 100  # above every other file the run writes, far below the new lock
    done = _run_lock(prefix, lock, limit, killable=True)
    assert done.returncode == -signal.SIGXFSZ, done.stderr  # the kernel killed it while writing
    assert lock.read_bytes() == before
    leftovers = list(tmp_path.glob(".conda-lock.yml.*.tmp"))
    assert len(leftovers) == 1 and leftovers[0].stat().st_size == limit  # it really died half-way
    assert condalock.read(lock).get("zlib") is not None
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0  # a later run succeeds
    assert condalock.read(lock).get("numpy") is not None


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs POSIX file-size limits")
def test_failed_write_is_exit_3_and_cleans_up(make_prefix: MakePrefix, tmp_path: Path) -> None:
    prefix, lock, before = _previous_lock(make_prefix, tmp_path)
    done = _run_lock(prefix, lock, len(before) + 100, killable=False)
    assert done.returncode == 3, done.stderr
    assert (
        done.stderr.count("\n") == 1
        and f"cannot write {lock}" in done.stderr
        and "nothing was changed" in done.stderr
    )
    assert lock.read_bytes() == before
    assert not list(tmp_path.glob(".conda-lock.yml.*.tmp"))
