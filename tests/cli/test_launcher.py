"""The console script's click-free fast paths answer exactly what the click CLI answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.cli import launcher
from envguard.cli.commandlist import COMMANDS, help_text
from tests.helpers import envguard

PROBE = (
    "import sys; from envguard.cli import launcher; code = launcher.fast_path(sys.argv[1:]); "
    "sys.stderr.write(repr((code, 'click' in sys.modules)) + '\\n')"
)


def run_fast(*args: str, cwd: Path | None = None) -> tuple[str, tuple[int | None, bool]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        cwd=cwd,
    )
    return done.stdout, eval(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [(), ("--help",), ("-h",)])
def test_help_without_click(args: tuple[str, ...]) -> None:
    out, (code, click_loaded) = run_fast(*args)
    assert code == 0 and not click_loaded
    assert out == help_text()
    for name, (_module, text) in COMMANDS.items():
        assert f"  {name}" in out and text in out


def test_fast_help_lists_what_click_lists(capsys: pytest.CaptureFixture[str]) -> None:
    envguard("--help")
    click_help = capsys.readouterr().out
    entries = [
        line.split()[0] for line in help_text().splitlines() if line.startswith("  -") or line[2:3].isalpha()
    ]
    assert entries and all(entry in click_help for entry in entries)


def test_version_without_click(capsys: pytest.CaptureFixture[str]) -> None:
    out, (code, click_loaded) = run_fast("--version")
    assert code == 0 and not click_loaded
    envguard("--version")
    assert out == capsys.readouterr().out


def test_snapshot_fast_path_matches_click(make_prefix, tmp_path: Path) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    fast_file, click_file = tmp_path / "fast.json", tmp_path / "click.json"
    _out, (code, click_loaded) = run_fast("snapshot", str(prefix), "--no-probe", "-o", str(fast_file))
    assert code == 0 and not click_loaded
    assert envguard("snapshot", "--no-probe", str(prefix), "--output", str(click_file)) == 0
    fast, slow = json.loads(fast_file.read_text()), json.loads(click_file.read_text())
    fast.pop("virtual_packages"), slow.pop("virtual_packages")
    assert fast == slow


def test_snapshot_fast_path_errors_use_the_boundary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert launcher.fast_path(["snapshot", str(tmp_path / "missing"), "--no-probe"]) == 2
    assert capsys.readouterr().err.startswith("envguard: error: ")


@pytest.mark.parametrize("style", [(), ("--json",), ("--markdown",), ("--all",)])
def test_diff_fast_path_matches_click(
    make_prefix, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, style: tuple[str, ...]
) -> None:
    monkeypatch.setenv("COLUMNS", "120")  # both processes draw the table at the same width
    a = make_prefix(["python=3.11", "numpy=1.26", "requests=2.32.3"], name="a")
    b = make_prefix(["python=3.11", "numpy=2.0", "six"], name="b")
    for pair, want in (((a, b), 1), ((a, a), 0)):
        args = ["diff", str(pair[0]), str(pair[1]), *style]
        out, (code, click_loaded) = run_fast(*args)
        assert (code, click_loaded) == (want, False)
        assert envguard(*args) == want
        assert out == capsys.readouterr().out  # the same text, byte for byte


MAIN = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('finalised\\n'))\n"
    "from envguard.cli.launcher import main\n"
    "sys.argv[0] = 'envguard'\n"
    "main()\n"
)


def run_main(*args: str) -> subprocess.CompletedProcess[str]:
    """The console script's entry point in a fresh process, with an exit handler that says whether the
    process was finalised."""
    return subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )


def test_fast_forms_end_without_finalising_and_lose_no_output(make_prefix) -> None:
    a = make_prefix(["python=3.11", "numpy=1.26", "requests=2.32.3"], name="a")
    b = make_prefix(["python=3.11", "numpy=2.0", "six"], name="b")
    done = run_main("diff", str(a), str(b), "--json")  # through a pipe, flushed before the process ends
    assert (done.returncode, json.loads(done.stdout)["equal"]) == (1, False)
    assert "finalised" not in done.stderr
    done = run_main("--version")
    assert (done.returncode, done.stdout.startswith("envguard")) == (0, True)
    assert "finalised" not in done.stderr
    done = run_main("name", "--help")  # a click form ends as a Python program does
    assert (done.returncode, "finalised" in done.stderr) == (0, True)


def test_lock_fast_path_matches_click(
    make_prefix, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    fast, slow = tmp_path / "fast" / "conda-lock.yml", tmp_path / "slow" / "conda-lock.yml"
    fast.parent.mkdir(), slow.parent.mkdir()
    _out, (code, click_loaded) = run_fast(
        "lock", str(prefix), "--no-probe", "-o", "conda-lock.yml", cwd=fast.parent
    )
    assert (code, click_loaded) == (0, False)
    monkeypatch.chdir(slow.parent)  # the lock records its own command line, -o included (absolute: no git)
    assert envguard("lock", str(prefix), "--no-probe", "-o", "conda-lock.yml") == 0
    masked = [lock.read_text().replace(str(lock.parent), "DIR") for lock in (fast, slow)]
    assert masked[0] == masked[1]
    explicit = tmp_path / "conda-{platform}.lock"
    args = ["lock", str(prefix), "--no-probe", "--format", "explicit", "-o", str(explicit)]
    capfd.readouterr()
    assert launcher.fast_path(args) == 0
    fast_lines = capfd.readouterr()
    assert envguard(*args) == 0
    assert capfd.readouterr() == fast_lines  # the same summary lines on stderr, nothing on stdout
    assert "wrote" in fast_lines.err and fast_lines.out == ""


def test_diff_fast_path_errors_use_the_boundary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert launcher.fast_path(["diff", str(tmp_path / "missing"), str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("envguard: error: ")


@pytest.mark.parametrize(
    "args",
    [
        ["diff", "a"],
        ["diff", "a", "b", "c"],
        ["diff", "a", "b", "--json", "--markdown"],
        ["diff", "a", "b", "--platform", "bogus"],
        ["diff", "a", "b", "--help"],
        ["diff", "--all", "--all", "a", "b"],
        ["lock", "--format", "yaml"],
        ["lock", "-f", "."],
        ["lock", "-o", "-"],
        ["lock", "--file=environment.yml"],
        ["lock", "a", "b"],
        ["snapshot", "--help"],
        ["snapshot", "a", "b"],
        ["snapshot", "--no-probe", "--no-probe"],
        ["export"],
        ["--verbose"],
    ],
)
def test_other_forms_go_to_click(args: list[str]) -> None:
    assert launcher.fast_path(args) is None


def test_every_command_is_declared_once_and_click_is_built_from_it() -> None:
    """Each command module declares its GRAMMAR; click's command lists exactly those options, in that order,
    and the console script's parser reads the same declaration (no second list of options anywhere)."""
    import importlib

    from envguard.cli.app import cli

    for name, (module_name, _help) in COMMANDS.items():
        module = importlib.import_module(module_name)
        declared = [flag for opt in module.GRAMMAR.options for flag in opt.flags]
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        flags = [flag for param in command.params for flag in getattr(param, "opts", [])]
        built = [flag for flag in flags if flag.startswith("-")]
        assert built == declared, name
        assert not hasattr(module, "command"), f"{module_name} declares a click command of its own"
