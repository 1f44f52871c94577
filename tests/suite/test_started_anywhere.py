"""The suite passes however it is started (issue 45): the tests that send Ctrl-C (marked `ctrl_c`), run by a
pytest that ignores SIGINT and SIGQUIT as a shell's background job does (`scripts/test.sh &`, CI, an IDE);
every child they signal has the disposition set by the test, and `envguard watch` gives its job SIGINT's
default action itself."""

from __future__ import annotations

import signal
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests.helpers import DEFAULTED, REPO


def ignored_as_a_background_job() -> None:
    """What a non-interactive shell does to a job it starts with `&` (SigIgn 0x6: SIGINT and SIGQUIT)."""
    for signum in DEFAULTED:
        signal.signal(signum, signal.SIG_IGN)


def ctrl_c_test_files() -> list[str]:
    """The test files holding a test marked `ctrl_c` (read as text: collecting the suite takes minutes)."""
    marker = "@pytest.mark.ctrl_c\n"
    here = Path(__file__).resolve()
    found = [p for p in sorted((REPO / "tests").rglob("test_*.py")) if p != here and marker in p.read_text()]
    return [str(p.relative_to(REPO)) for p in found]


def outcomes(report: Path) -> dict[str, str]:
    """test id -> passed, failed (with its message) or skipped (with its reason), from JUnit XML."""
    found: dict[str, str] = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        failure = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            found[name] = f"failed: {(failure.get('message') or '')[:300]}"
        elif skipped is not None:
            found[name] = f"skipped: {skipped.get('message')}"
        else:
            found[name] = "passed"
    return found


def test_the_background_start_is_real() -> None:
    """The start below does what a shell does: the child's SigIgn names SIGINT and SIGQUIT."""
    done = subprocess.run(
        ["grep", "^SigIgn:", "/proc/self/status"],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=ignored_as_a_background_job,
    )
    mask = int(done.stdout.split()[1], 16)
    assert mask & (1 << (signal.SIGINT - 1)) and mask & (1 << (signal.SIGQUIT - 1)), done.stdout


@pytest.mark.slow
def test_the_ctrl_c_tests_pass_started_as_a_background_job(tmp_path: Path) -> None:
    files = ctrl_c_test_files()
    assert len(files) >= 4, files  # smoke's budget, verify's interruption, watch's command and terminal
    report = tmp_path / "report.xml"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        "ctrl_c",
        f"--junitxml={report}",
    ]
    done = subprocess.run(
        [*argv, *files],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        preexec_fn=ignored_as_a_background_job,
        timeout=900,
    )
    found = outcomes(report)
    bad = {name: outcome for name, outcome in found.items() if outcome != "passed"}
    assert done.returncode == 0 and not bad, (bad, done.stdout[-3000:], done.stderr[-2000:])
    assert len(found) >= 7, found  # every marked test ran (the parametrized ones twice)
