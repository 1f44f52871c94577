"""A command that used py-rattler exits with its own code: never SIGABRT/SIGSEGV while CPython finalises
(py-rattler's runtime threads crashed the interpreter's shutdown in about one run in ten)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

RUNS = 30


def test_rattler_commands_never_crash_at_exit(channels: dict[str, Path], tmp_path: Path) -> None:
    env_yml = tmp_path / "environment.yml"
    forge = channels["forge"].as_uri()
    env_yml.write_text(f"channels:\n  - {forge}\ndependencies:\n  - python=3.11\n  - six\n")
    exe = shutil.which("envguard", path=str(Path(sys.executable).parent))
    assert exe is not None
    codes = []
    for _ in range(RUNS):
        command = [exe, "name", str(env_yml), "--backend", "embedded"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        codes.append(done.returncode)
        assert done.returncode not in (1, 2, 3, 4), done.stderr  # a real error, not a crash at exit
    crashes = [code for code in codes if code != 0]
    assert not crashes, f"{len(crashes)} of {RUNS} runs crashed at exit (codes {sorted(set(crashes))})"
