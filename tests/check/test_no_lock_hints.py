"""Without a lock, each command names only options it has, and a lock under a near name is offered (issue 43:
`sync` suggested `-f environment.yml`, which is `No such option '-f'`; a misspelled lock got no "did you
mean")."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import MakePrefix


def _run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envguard", *argv], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("command", ["check", "sync"])
def test_the_hint_names_options_the_command_has_and_a_near_file(
    make_prefix: MakePrefix, tmp_path: Path, command: str
) -> None:
    prefix = make_prefix(["zlib"])
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()  # the search stops at the repository root
    (project / "conda_lock.yml").write_text("version: 1\n")
    done = _run(project, command, str(prefix))
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert line.count("\n") == 0 and "did you mean conda_lock.yml?" in line, line
    hinted = line.rsplit("pass ", 1)[1]
    assert ("-f environment.yml" in hinted) == (command == "check"), line
    for option in ("--lock", *(["-f"] if command == "check" else [])):
        helped = _run(project, command, "--help").stdout
        assert f"{option} " in helped or f"{option}," in helped, (option, helped)


@pytest.mark.parametrize("command", ["check", "sync"])
def test_the_suggested_lock_command_runs_as_printed_and_then_the_command_passes(
    make_prefix: MakePrefix, tmp_path: Path, command: str
) -> None:
    """`create one with envguard lock` named no environment: run as printed it locked whatever was active (or
    nothing), not the SOURCE the user gave."""
    prefix = make_prefix(["zlib"])
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    done = _run(project, command, str(prefix))
    assert done.returncode == 2, done.stderr
    [suggested] = [c for c in done.stderr.split("`")[1::2] if c.startswith("envguard lock")]
    argv = shlex.split(suggested)
    assert _run(project, *argv[1:]).returncode == 0
    again = _run(project, command, str(prefix), *(["--dry-run"] if command == "sync" else []))
    assert again.returncode == 0, again.stdout + again.stderr
