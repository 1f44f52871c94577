"""The command-line shell: lazy subcommands and the one error boundary.

Commands live in `envguard.commands.<name>` and are imported only when invoked, so `envguard --help` stays
fast (no rattler, rich, deepdiff or torch on that path).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, NoReturn

import click

from envguard import __version__
from envguard.errors import EXIT_BUG, EXIT_INTERRUPTED, EXIT_OK, EnvguardError

# name -> (module, one-line help shown by `envguard --help` without importing the module)
COMMANDS: dict[str, tuple[str, str]] = {
    "snapshot": ("envguard.commands.snapshot", "Print an environment as envguard JSON."),
    "export": ("envguard.commands.export", "Write a portable environment.yml or an explicit spec."),
    "lock": ("envguard.commands.lock", "Write conda-lock.yml from a live environment or an environment.yml."),
    "diff": ("envguard.commands.diff", "Compare two environments or files, two-way."),
    "check": ("envguard.commands.check", "Check the live environment against a lock or environment.yml."),
    "name": ("envguard.commands.name", "Print the semantic name a source would get."),
    "create": ("envguard.commands.create", "Create an environment with a semantic name."),
    "verify": ("envguard.commands.verify", "Rebuild the lock in a temporary prefix and check it (CI)."),
    "smoke": ("envguard.commands.smoke", "DataLoader determinism and throughput test."),
    "doctor": ("envguard.commands.doctor", "GPU/CPU/memory/shm/disk checklist for training."),
    "clean": ("envguard.commands.clean", "Safely clean package caches (dry run by default)."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_module, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110}
)
@click.version_option(__version__, prog_name="envguard")
def cli() -> None:
    """envguard: keep conda environments for machine learning reproducible, and say precisely when they drift.

    Exit codes: 0 ok, 1 drift or check failed, 2 bad input or usage, 3 operational failure, 4 bug, 130 Ctrl-C.
    """


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: run the CLI inside the error boundary and exit with a documented code."""
    code = run(argv)
    sys.exit(code)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code instead of exiting (used by tests and `main`)."""
    try:
        result: Any = cli.main(args=argv, prog_name="envguard", standalone_mode=False)
    except EnvguardError as exc:
        _error_line(str(exc))
        return exc.exit_code
    except click.exceptions.Abort:
        _error_line("interrupted")
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        _error_line("interrupted")
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except Exception:
        return _bug()
    return result if isinstance(result, int) else EXIT_OK


def _error_line(message: str) -> None:
    sys.stderr.write(f"envguard: error: {message}\n")


def _bug() -> int:
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="envguard-crash-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(f"envguard {__version__}, python {sys.version}\nargv: {sys.argv}\n\n")
        traceback.print_exc(file=handle)
    kind = sys.exc_info()[0]
    name = kind.__name__ if kind else "error"
    _error_line(
        f"internal error ({name}); this is a bug in envguard. Traceback saved to {path}; please report it"
    )
    return EXIT_BUG


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
