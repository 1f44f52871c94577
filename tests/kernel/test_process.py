"""The one subprocess helper: output collected, a timeout kills the whole process group (no orphans)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from envguard import process


def test_output_and_exit_code() -> None:
    done = process.run(
        [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")


def test_timeout_kills_the_children_too(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time; "
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(pid_file)!r}, 'w').write(str(child.pid)); print('started', flush=True); time.sleep(60)"
    )
    started = time.monotonic()
    with pytest.raises(process.TimedOut) as caught:
        process.run([sys.executable, "-c", script], timeout=2)
    assert time.monotonic() - started < 15
    assert "started" in caught.value.stdout
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        with open(f"/proc/{child}/stat") as handle:  # a zombie reaped by init later is gone for our purpose
            if handle.read().split(")")[-1].split()[0] == "Z":
                return
        time.sleep(0.1)
    pytest.fail(f"the grandchild {child} outlived the timeout")


def test_a_missing_program_is_oserror() -> None:
    with pytest.raises(OSError):
        process.run(["/nonexistent/program"], timeout=5)
