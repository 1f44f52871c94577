"""Issue 10, bad input: a --loader function that hangs, or whose dataset hangs, is stopped at the --budget
with every DataLoader worker (counted in /proc by an environment marker every process of the run inherits):
exit 3, one line naming FILE.py:NAME (and the sample)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.helpers import REPO, RUN_MARKER, settle

PLANTED = REPO / "tests" / "pipeline_planted.py"
MARKER = RUN_MARKER
BUDGET = 8


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("hanging_loader", "pipeline_planted.py:hanging_loader: calling hanging_loader(), which had not"),
        ("hanging_dataset_loader", "the dataset did not return sample 5 within"),
    ],
)
def test_a_hanging_loader_exits_3_at_the_budget_naming_it(prefix: Path, name: str, says: str) -> None:
    tag = uuid.uuid4().hex
    began = time.monotonic()
    argv = ["smoke", str(prefix), "--budget", str(BUDGET), "--loader", f"{PLANTED}:{name}"]
    process = subprocess.Popen(
        [sys.executable, "-m", "envguard", *argv],
        cwd=REPO,
        env=dict(os.environ, **{MARKER: tag}),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _out, err = process.communicate(timeout=60)
    elapsed = time.monotonic() - began
    lines = err.strip().splitlines()
    assert process.returncode == 3, err
    assert len(lines) == 1 and says in lines[0] and f"pipeline_planted.py:{name}" in lines[0], err
    assert "Traceback" not in err and elapsed <= BUDGET + 3, (elapsed, err)
    assert settle(tag) == []
