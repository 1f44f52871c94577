"""The `envguard` console script: the most frequent invocations without importing click.

`envguard check` runs before every training job and in pre-commit hooks; `envguard snapshot`, `diff`, `lock`
and `sync` are scripted; `envguard --help` is the first thing people type. Click's import alone costs more
than answering some of them, so these commands' forms that their declaration (envguard.cli.grammar) parses
are run here, inside the same error boundary (envguard.cli.boundary), by the same function click would call.
Any other command, option or form goes to envguard.cli.app, unchanged.
"""

from __future__ import annotations

import importlib
import sys

from envguard.cli.boundary import exit_process, guarded
from envguard.cli.commandlist import COMMANDS, help_text, version_text
from envguard.cli.grammar import parse
from envguard.errors import EXIT_OK

ANSWERED_HERE = ("check", "snapshot", "diff", "lock", "sync")


def main() -> None:
    """Console-script entry point."""
    code = fast_path(sys.argv[1:])
    if code is not None:
        exit_process(code, finalise=False)  # a form answered here: nothing is left to finalise
    from envguard.cli.app import run  # click: only for what is not answered here

    exit_process(run())


def fast_path(args: list[str]) -> int | None:
    """The exit code of a form answered here, or None to hand the arguments to click."""
    if args in ([], ["--help"], ["-h"]):
        sys.stdout.write(help_text())
        return EXIT_OK
    if args == ["--version"]:
        sys.stdout.write(version_text())
        return EXIT_OK
    if not args or args[0] not in ANSWERED_HERE:
        return None
    # the command's declaration and body; its feature is imported by the body, where it runs
    command = importlib.import_module(COMMANDS[args[0]][0])
    values = parse(command.GRAMMAR, args[1:])
    if values is None:
        return None  # click answers it: help, an error in one line, a form parse does not take
    return guarded(lambda: command.run(**values))
