"""check warns when torch, torchvision and torchaudio do not belong together (issue 27), without turning a
clean check into drift: exit 0, the warning on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_check_warns_about_a_mismatched_torch_family(mismatched_env: Path, tmp_path: Path) -> None:
    lock = tmp_path / "conda-lock.yml"
    run = [sys.executable, "-m", "envguard"]
    made = subprocess.run(
        [*run, "lock", str(mismatched_env), "--no-probe", "-o", str(lock)], capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    done = subprocess.run(
        [*run, "check", str(mismatched_env), "--lock", str(lock)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "torch family: torchvision 0.29.1 (pip) is not from torch 2.13's release" in done.stderr
