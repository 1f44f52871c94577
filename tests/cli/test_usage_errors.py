"""Every usage error is one line, `envguard: error: ...` with the `--help` hint, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envguard.errors import EXIT_BAD_INPUT

SCRIPT = str(Path(sys.executable).parent / "envguard")


@pytest.mark.parametrize(
    ("args", "names", "hint"),
    [
        (["frobnicate"], "frobnicate", "envguard --help"),
        (["check", "--bogus"], "--bogus", "envguard check --help"),
        (["diff", "only-one"], "B", "envguard diff --help"),
        (["export", "--format", "nope"], "nope", "envguard export --help"),
        (["lock", "--platform"], "--platform", "envguard lock --help"),
        (["smoke", "--num-workers", "-1"], "-1", "envguard smoke --help"),
        (["export", "--pinned", "--full"], "--pinned and --full are alternatives", "envguard export --help"),
        (["export", "--full", "--from-history"], "--full and --from-history", "envguard export --help"),
    ],
)
def test_usage_error_is_one_line(args: list[str], names: str, hint: str, tmp_path: Path) -> None:
    done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == EXIT_BAD_INPUT, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("envguard: error: "), done.stderr
    assert names in lines[0] and hint in lines[0], lines[0]
    assert done.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ["check", str(Path(sys.prefix)), "--platform", "bogus"],
        ["snapshot", "--platform", "bogus"],
        ["snapshot", "--platform", "noarch"],
        ["diff", "a", "b", "--platform", "linux-65"],
        ["export", "--platform", "bogus"],
        ["verify", "--platform", "bogus"],
    ],
)
def test_an_unknown_platform_is_one_line_everywhere(args: list[str], tmp_path: Path) -> None:
    """Every --platform is checked before anything is read (it was silently accepted by check, diff, export,
    snapshot and verify)."""
    done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == EXIT_BAD_INPUT, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "is not a conda platform" in lines[0], done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ["lock", "--no-cuda", "-f", "\x00"],  # the CLI fuzz's case: click.Path's os.stat raised ValueError
        ["check", "--lock", "a\x00b"],
        ["snapshot", "\x00"],
    ],
)
def test_a_nul_in_an_argument_is_one_line(args: list[str], tmp_path: Path, capsys) -> None:
    """A NUL cannot reach argv through exec, but the in-process entry point (`run`) takes any list: a word
    holding one is a usage error in one line naming it, exit 2 (was exit 4, ValueError from os.stat)."""
    from tests.helpers import envguard

    assert envguard(*args, cwd=tmp_path) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NUL" in err and "internal error" not in err, err
