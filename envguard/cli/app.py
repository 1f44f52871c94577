"""The command line (the `envguard` console script): click's group of lazy subcommands, inside the one error
boundary.

Command `NAME` is the click command `NAME` of module `envguard.cli.commands.NAME`, imported only when invoked,
so `envguard --help` stays fast (no rattler, rich, deepdiff or torch on that path).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, NoReturn

import click

from envguard.cli.boundary import error_line, exit_process, guarded
from envguard.cli.commandlist import COMMANDS, DESCRIPTION
from envguard.errors import UsageError
from envguard.version import __version__


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        found: click.Command = getattr(module, cmd_name)
        return found

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_module, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    help=DESCRIPTION,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
)
@click.version_option(__version__, prog_name="envguard")
def cli() -> None:
    """The top-level group; its help text is commandlist.DESCRIPTION."""


# Commands whose runs leave nothing for the interpreter's finalisation to close or clean up (each file they
# write is written atomically and closed, each thread pool joined and each child process waited for before
# they return): they end without it, which an unchanged `check` in a pre-commit hook would otherwise pay
# (~13 ms CPU of ~85 once click is loaded).
LEAVE_NOTHING = ("check", "snapshot", "diff", "lock", "sync")


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: run the CLI inside the error boundary and exit with a documented code."""
    words = sys.argv[1:] if argv is None else argv
    exit_process(run(argv), finalise=not (words[:1] and words[0] in LEAVE_NOTHING))


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code instead of exiting (used by tests and `main`)."""

    def call() -> Any:
        words = sys.argv[1:] if argv is None else argv
        held = next((word for word in words if "\0" in word), None)
        if held is not None:  # exec cannot pass one; `run` can, and os.stat would raise ValueError on it
            raise UsageError(f"argument {held!r} holds a NUL character, which no path or value may hold")
        try:
            return cli.main(args=argv, prog_name="envguard", standalone_mode=False)
        except click.exceptions.Abort:
            raise KeyboardInterrupt from None
        except click.ClickException as exc:
            error_line(usage_line(exc, argv))
            return exc.exit_code
        except click.exceptions.Exit as exc:
            return exc.exit_code

    return guarded(call)


def usage_line(exc: click.ClickException, argv: list[str] | None = None) -> str:
    """Click's three-line usage error (Usage / Try / Error) as the one line the README promises: the message,
    then the `--help` of the command that refused it."""
    message = " ".join(exc.format_message().split())
    if not isinstance(exc, click.UsageError):
        return message
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else "envguard"
    words = list(sys.argv[1:] if argv is None else argv)
    if path == "envguard" and words[:1] and words[0] in COMMANDS:
        path = f"envguard {words[0]}"  # an option error raised before the subcommand's context existed
    return f"{message} (see '{path} --help')"
