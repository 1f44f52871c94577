"""verify shows progress where it waits (fetch/hash, link) on a terminal, and nothing without one or with
--json: a real pseudo-terminal on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import envguard, stderr_on_a_terminal

SCRIPT = str(Path(sys.executable).parent / "envguard")


def _lock(folder: Path, channel: Path) -> Path:
    yml = folder / "environment.yml"
    yml.write_text(f"channels:\n  - {channel.resolve().as_uri()}\ndependencies:\n  - python=3.11\n  - six\n")
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(folder / "conda-lock.yml")) == 0
    return folder / "conda-lock.yml"


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_progress_on_a_terminal_only(
    extra: list[str], channels: dict[str, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    lock = _lock(tmp_path, channels["forge"])
    code, err = stderr_on_a_terminal(
        ["verify", "--lock", str(lock), "--pkgs-dir", str(tmp_path / "pkgs"), *extra], tmp_path
    )
    assert code == 0, err
    assert ("fetching and hashing archives" in err) is (not extra), err
    done = subprocess.run(
        [SCRIPT, "verify", "--lock", str(lock)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and "fetching" not in done.stderr  # a pipe: no bar
