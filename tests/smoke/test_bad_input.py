"""Bad --dataset/--data input gets one line naming the file (and line) and what to do, exit 2, no traceback:
the real `envguard smoke` command on a real prefix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


def smoke(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envguard", "smoke", *argv],
        cwd=REPO,
        text=True,
        capture_output=True,
        timeout=120,
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("envguard: error: "), done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "import torch\n\nclass Broken(torch.utils.data.Dataset:\n    pass\n",
            ":3: SyntaxError: ",
        ),
        (
            "import os\n\nROOT = os.environ['NO_SUCH_DATA_ROOT_FOR_ENVGUARD']\n\nclass Images:\n    pass\n",
            ":3: KeyError: 'NO_SUCH_DATA_ROOT_FOR_ENVGUARD'",
        ),
    ],
    ids=["syntax-error", "raises-on-import"],
)
def test_a_dataset_module_that_cannot_be_imported(
    prefix: Path, tmp_path: Path, source: str, expected: str
) -> None:
    """Before: exit 1, a crash finding per phase, and no file or line."""
    bad = tmp_path / "bad.py"
    bad.write_text(source)
    line = one_error_line(smoke(str(prefix), "--budget", "15", "--dataset", f"{bad}:Broken"))
    assert f"{bad}{expected}" in line, line
    assert "fix that line" in line and f"python {bad}" in line


def test_data_and_dataset_together_are_refused(prefix: Path, tmp_path: Path) -> None:
    """README: --data DIR | --dataset FILE.py:NAME. Before: both accepted silently."""
    good = tmp_path / "good.py"
    good.write_text("class Fine:\n    pass\n")
    line = one_error_line(smoke(str(prefix), "--data", str(tmp_path), "--dataset", f"{good}:Fine"))
    assert "--data and --dataset are mutually exclusive" in line


@pytest.mark.parametrize(
    "argv", [("--step-threads", "2"), ("--step-threads", "2", "--loader", "x.py:f"), ("--step-threads", "0")]
)
def test_step_threads_without_the_step_it_describes_is_refused(prefix: Path, argv: tuple[str, ...]) -> None:
    """--step-threads describes the step beside --loader and --step-ms: alone it would be ignored."""
    line = one_error_line(smoke(str(prefix), *argv))
    assert "--step-threads" in line, line
