"""smoke shows a progress bar with its current phase on a terminal, and nothing with --json or into a pipe:
a real pseudo-terminal on stderr, the real module and DataLoader workers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import stderr_on_a_terminal

SCRIPT = str(Path(sys.executable).parent / "envguard")
FAST = ["--budget", "8", "--workers", "0,1"]


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_progress_on_a_terminal_only(extra: list[str], prefix: Path, tmp_path: Path) -> None:
    """Before: the module's own lines passed through on a terminal, --json or not."""
    code, err = stderr_on_a_terminal(["smoke", str(prefix), *FAST, *extra], tmp_path)
    assert code in (0, 1), err
    assert ("envguard smoke: " in err) is (not extra), err
    if not extra:  # a rich bar naming what the module is doing
        assert "\u2501" in err and ("phase" in err or "throughput" in err), err
    assert "Traceback" not in err


def test_no_progress_into_a_pipe(prefix: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [SCRIPT, "smoke", str(prefix), *FAST], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr == ""
