"""A SOURCE the file system cannot even look up (a name longer than NAME_MAX) and launcher variables beyond a
C int are bad input in one line, exit 2 (issue 42: exit 4, OSError / TypeError, for export, snapshot, sync,
lock, doctor, smoke and --distributed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LONG = "a" * 300


def _run(argv: list[str], cwd: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envguard", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **environ},
    )


@pytest.mark.parametrize("command", ["export", "snapshot", "sync", "lock", "doctor", "smoke", "check"])
def test_a_source_name_too_long_is_one_line(tmp_path: Path, command: str) -> None:
    extra = ["--lock", str(tmp_path / "conda-lock.yml")] if command in ("check", "sync") else []
    done = _run([command, str(tmp_path / LONG), *extra], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("envguard: error: "), done.stderr


def test_a_world_size_beyond_a_c_int_is_one_line(tmp_path: Path) -> None:
    done = _run(
        ["check", "--distributed"],
        tmp_path,
        WORLD_SIZE="99999999999999999999",
        RANK="0",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT="29500",
    )
    assert done.returncode == 2, done.stderr
    assert "WORLD_SIZE" in done.stderr and done.stderr.count("\n") == 1, done.stderr
