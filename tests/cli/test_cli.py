"""The CLI shell: lazy commands, the error boundary and exit codes (tests/docs keeps the docs' command list in
step with --help)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.cli import app as cli
from tests.helpers import envguard


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert envguard("--help") == 0
    out = capsys.readouterr().out
    for name in cli.COMMANDS:
        assert re.search(rf"^\s+{name}\s", out, re.MULTILINE), name


def test_top_level_help_fits_80_columns() -> None:
    """The top-level help and every command's help, through the console script."""
    script = str(Path(sys.executable).parent / "envguard")
    env = {**os.environ, "COLUMNS": "80"}
    for argv in (["--help"], ["-h"], *([name, "--help"] for name in cli.COMMANDS)):
        done = subprocess.run([script, *argv], capture_output=True, text=True, env=env, check=True)
        assert max(len(line) for line in done.stdout.splitlines()) <= 80, done.stdout


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_each_command_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert envguard(name, "--help") == 0
    assert "Usage: envguard" in capsys.readouterr().out


def test_help_startup_imports_no_heavy_modules() -> None:
    code = (
        "import sys; from envguard.cli.app import run; run(['--help']); print(sorted(m for m in "
        "('torch','rattler','deepdiff','rich','yaml','numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_unknown_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert envguard("frobnicate") == 2
    assert "No such command" in capsys.readouterr().err


def test_bug_exit_4_saves_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(cli.COMMANDS, "crash", ("tests.crashing_command", "crash"))
    assert envguard("crash") == 4
    err = capsys.readouterr().err
    match = re.search(r"Traceback saved to (\S+);", err)
    assert match and "ZeroDivisionError" in Path(match.group(1)).read_text()
    assert "Traceback (most recent call last)" not in err


def test_python_dash_m_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "envguard", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "envguard" in done.stdout


MAIN = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('finalised\\n'))\n"
    "from envguard.cli.app import main\n"
    "sys.argv[0] = 'envguard'\n"
    "main()\n"
)


def test_commands_that_leave_nothing_end_without_finalising_and_lose_no_output(make_prefix) -> None:
    """check, snapshot, diff, lock and sync end without the interpreter's finalisation (an unchanged check's
    ~13 ms), through a pipe with every byte flushed; any other command ends as a Python program does."""

    def main(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", MAIN, *args], capture_output=True, text=True, timeout=120, check=False
        )

    a = make_prefix(["python=3.11", "numpy=1.26", "requests=2.32.3"], name="a")
    b = make_prefix(["python=3.11", "numpy=2.0", "six"], name="b")
    done = main("diff", str(a), str(b), "--json")
    assert (done.returncode, json.loads(done.stdout)["equal"]) == (1, False)
    assert "finalised" not in done.stderr
    done = main("name", "--help")
    assert (done.returncode, "finalised" in done.stderr) == (0, True)
