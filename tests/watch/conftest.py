"""Watch's fixtures: a real training script, and a runner for `envguard watch --json` on it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.watch.helpers import TRAIN, Watch, Watched, run_envguard


@pytest.fixture
def train_script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    return path


@pytest.fixture
def watch(tmp_path: Path, train_script: Path) -> Watch:
    """watch(*script_args, interval=0.5, extra=()) runs `envguard watch --json -o FILE -- python train.py
    ARGS`."""

    def run(
        *script_args: str,
        interval: float = 0.5,
        extra: tuple[str, ...] = (),
        command: tuple[str, ...] | None = None,
    ) -> Watched:
        out = tmp_path / "watch.json"
        out.unlink(missing_ok=True)
        cmd = command or (sys.executable, str(train_script), *script_args)
        done = run_envguard(
            "watch", "--interval", str(interval), "--json", "-o", str(out), *extra, "--", *cmd
        )
        report = json.loads(out.read_text()) if out.exists() else {}
        return Watched(done.returncode, report, done.stdout, done.stderr)

    return run
