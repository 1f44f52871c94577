"""The in-environment smoke package stays standalone: no envguard imports, Python 3.8 syntax, runs by
itself."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.smoke import runner

PACKAGE = Path(runner.PACKAGE_PARENT) / "envguard_smoke"
MODULES = sorted(PACKAGE.glob("*.py"))


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_imports_nothing_from_envguard(module: Path) -> None:
    tree = ast.parse(module.read_text(), feature_version=(3, 8))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not any(alias.name.split(".")[0] == "envguard" for alias in node.names), module
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            assert (node.module or "").split(".")[0] not in ("envguard", "envguard_smoke"), (
                module,
                node.module,
            )


def test_runs_as_a_top_level_package_and_reports_missing_torch(tmp_path: Path) -> None:
    """Under an interpreter without torch (a fresh venv) the module answers with a marker line, not a
    crash."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    measured = runner.run_target(python, {"budget_s": 5}, timeout=60)  # one plain JSON line, read by wire
    assert measured.refusal == "torch-missing" and measured.executable == str(python)


SHORT_FUNCTIONS = [
    PACKAGE / "timing.py",
    PACKAGE / "planner.py",
    PACKAGE / "profiling.py",
    PACKAGE.parent / "rates.py",
]


@pytest.mark.parametrize("module", SHORT_FUNCTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_measurement_functions_stay_under_fifty_lines(module: Path) -> None:
    """The timing loop and its analysis read in one screen (`_measure` was 70 lines, then 55)."""
    tree = ast.parse(module.read_text())
    long = {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.end_lineno and node.end_lineno - node.lineno + 1 > 50
    }
    assert long == {}
