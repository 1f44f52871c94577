"""lock warns when torch, torchvision and torchaudio do not belong together (issue 27): a CPU torch beside
PyPI's CUDA torchvision is locked, with one warning per reason, and the exit stays 0."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

CPU_TORCH_ONLY = pytest.mark.skipif(
    "+cpu" not in importlib.metadata.version("torch"),
    reason="the CUDA torch wheel is installed: no CPU torch to put beside a CUDA torchvision (the mismatch "
    "this test builds); the CPU wheel's run covers it",
)


@pytest.mark.slow
@CPU_TORCH_ONLY
def test_lock_warns_about_a_mismatched_torch_family(mismatched_env: Path, tmp_path: Path) -> None:
    lock = tmp_path / "conda-lock.yml"
    done = subprocess.run(
        [sys.executable, "-m", "envguard", "lock", str(mismatched_env), "--no-probe", "-o", str(lock)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert lock.is_file()
    warned = [line for line in done.stderr.splitlines() if "torch family" in line]
    assert len(warned) == 2, done.stderr
    assert (
        "torchvision 0.29.1 (pip) is not from torch 2.13's release (that is torchvision 0.28.x)" in warned[0]
    )
    assert (
        "PyPI's default wheel (a CUDA build on Linux x86-64), torch 2.13.0+cpu (pip) a CPU build" in warned[1]
    )
