"""The CLI's arguments under fuzz (issue 42): for every command of the click group, hypothesis-made argv (its
own option names with bad values, unknown options, odd paths: missing, a folder, a device, a FIFO, very long,
not UTF-8, leading dashes) run in-process ends 0, 1, 2 or 3 with no traceback, never 4 (a bug).

The seed is fixed and each command gets a bounded number of examples; a run that has not ended after
HANG_S seconds is reported as a hang (a bound on a stuck run, not a speed assertion)."""

from __future__ import annotations

import json
import os
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from envguard.cli.app import cli
from tests.fuzz.strategies import RECORD
from tests.helpers import envguard

HANG_S = 120


def _commands() -> dict[str, click.Command]:
    """Every subcommand, as the click group lists and loads it (no hand-kept list)."""
    ctx = click.Context(cli)
    found = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


COMMANDS = _commands()

# odd paths, named here and made under a per-module folder (`_odd_paths`)
PATHS = ("<missing>", "<folder>", "<device>", "<fifo>", "<long>", "<long-name>", "<not-utf8>", "<dash>")
# and good inputs, so a run gets past SOURCE to what the other words do to it: a one-package prefix, its lock
# (made by `envguard lock`), an environment.yml
GOOD = ("<env>", "<lock>", "<envyml>")
VALUES = st.sampled_from(
    [
        *PATHS,
        *GOOD,
        *GOOD,
        "",
        "-",
        "--",
        "-1",
        "0",
        "3.5",
        "1e999",
        "nan",
        "inf",
        "-inf",
        "99999999999999999999",
        "abc",
        "\x00",
        "é\u202e",
        "a\nb",
        "linux-64",
        "name:x",
        "name:",
        "conda-forge",
        "file:///",
        "x" * 5000,
    ]
)
UNKNOWN = st.sampled_from(["--no-such-option", "-Z", "--json=1", "--=", "---", "--help=x", "-o"])


def _option_words(command: click.Command) -> list[tuple[str, bool, tuple[str, ...]]]:
    """(name, takes a value, its valid choices if it has some) for every spelling of every option."""
    words: list[tuple[str, bool, tuple[str, ...]]] = []
    for param in command.params:
        if isinstance(param, click.Option):
            takes = not param.is_flag and not param.count
            choices = tuple(map(str, param.type.choices)) if isinstance(param.type, click.Choice) else ()
            words += [(name, takes, choices) for name in (*param.opts, *param.secondary_opts)]
    return words


@st.composite
def argv_for(draw: st.DrawFn, name: str) -> list[str]:
    """A command line for `name`: some of its options with any values, a value for each of its arguments
    (mostly), and now and then an unknown option somewhere."""
    command = COMMANDS[name]
    options = _option_words(command)
    words: list[str] = []
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        option, takes, choices = draw(st.sampled_from(options))
        value = draw(st.sampled_from(choices) | VALUES if choices else VALUES)  # past the parser, too
        if not takes:
            words.append(option)
        elif option.startswith("--") and draw(st.booleans()):
            words.append(f"{option}={value}")
        else:
            words += [option, value]
    for param in command.params:
        if isinstance(param, click.Argument) and draw(st.integers(0, 4)):
            words += draw(st.lists(VALUES, min_size=1, max_size=1 if param.nargs == 1 else 3))
    if not draw(st.integers(0, 7)):
        words.insert(draw(st.integers(0, len(words))), draw(UNKNOWN))
    return [name, *words]


class Hung(BaseException):
    """A run that did not end (BaseException: the CLI's boundary must not turn it into an exit code)."""


@pytest.fixture(scope="module")
def odd_paths(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The odd paths, in a fresh folder. The device is a copy of /dev/null's node where this user may make
    one (a command that replaced it would replace the copy, never the machine's /dev/null); the FIFO has a
    reader that drains it, so an `-o FIFO` run ends as it would in a shell pipeline."""
    root = tmp_path_factory.mktemp("odd")
    device = root / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError:
        device = Path("/dev/null")  # not root: nothing here can replace it
    fifo = root / "fifo"
    os.mkfifo(fifo)
    drain = os.open(fifo, os.O_RDWR)  # held open: a writer's open never blocks, and a reader never sees EOF

    def drained() -> None:
        while True:
            try:
                if not os.read(drain, 1 << 16):
                    return
            except OSError:
                return

    threading.Thread(target=drained, daemon=True).start()
    (root / "folder").mkdir()
    paths = {
        "<missing>": str(root / "missing" / "conda-lock.yml"),
        "<folder>": str(root / "folder"),
        "<device>": str(device),
        "<fifo>": str(fifo),
        "<long>": str(root) + "/d" * 3000,
        "<long-name>": str(root / ("n" * 300)),
        "<not-utf8>": os.fsdecode(bytes(root) + b"/\xff\xfe.yml"),
        "<dash>": "-" + str(root / "folder"),
        **_good_inputs(root),
    }
    yield paths
    os.close(drain)


def _good_inputs(root: Path) -> dict[str, str]:
    env = root / "env"
    (env / "conda-meta").mkdir(parents=True)
    record = {**RECORD, "files": [], "md5": "0" * 32, "sha256": "a" * 64}
    (env / "conda-meta" / "zlib-1.3.1-h0_0.json").write_text(json.dumps(record))
    lock = root / "conda-lock.yml"
    assert envguard("lock", str(env), "--no-probe", "-o", str(lock)) == 0
    envyml = root / "environment.yml"
    envyml.write_text("name: fuzz\nchannels:\n  - conda-forge\ndependencies:\n  - zlib=1.3\n")
    return {"<env>": str(env), "<lock>": str(lock), "<envyml>": str(envyml)}


def _hang(signum: int, frame: Any) -> None:
    raise Hung(f"still running after {HANG_S} s")


def run_argv(words: list[str], paths: dict[str, str], cwd: Path, capfd: Any) -> None:
    """Run `words` (odd-path names replaced) and check the outcome: 0-3, no traceback, no internal error."""
    argv = [paths.get(word, word) for word in words]
    for name, path in paths.items():
        argv = [word.replace(name, path) for word in argv]  # `--opt=<name>`
    capfd.readouterr()
    old = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(HANG_S)
    try:
        code = envguard(*argv, cwd=cwd)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = capfd.readouterr().err
    shown = [word if len(word) < 80 else f"{word[:40]}...({len(word)} characters)" for word in argv]
    assert code in (0, 1, 2, 3), f"{shown!r}: exit {code}\n{err[:2000]}"
    assert "Traceback" not in err and "internal error" not in err, f"{shown!r}\n{err[:2000]}"
    assert stat.S_ISCHR(os.stat(paths["<device>"]).st_mode), f"{shown!r} replaced the device node"


def test_every_command_is_fuzzed() -> None:
    """The fuzz covers every command `envguard --help` lists, each loaded through the group."""
    assert sorted(COMMANDS) == sorted(cli.list_commands(click.Context(cli)))
    assert all(_option_words(command) for command in COMMANDS.values())


def _fuzz(name: str, examples: int, paths: dict[str, str], cwd: Path, capfd: Any) -> None:
    @seed(42)
    @settings(max_examples=examples, database=None)
    @given(argv_for(name))
    def fuzz(words: list[str]) -> None:
        run_argv(words, paths, cwd, capfd)

    fuzz()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_argv(name: str, odd_paths: dict[str, str], tmp_path_factory: pytest.TempPathFactory, capfd) -> None:
    # from an empty folder: no pyproject.toml or lock of the repository is found
    _fuzz(name, 60, odd_paths, tmp_path_factory.mktemp("cwd"), capfd)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_argv_long(
    name: str, odd_paths: dict[str, str], tmp_path_factory: pytest.TempPathFactory, capfd
) -> None:
    _fuzz(name, 600, odd_paths, tmp_path_factory.mktemp("cwd"), capfd)
