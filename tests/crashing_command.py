"""A command that fails with an unexpected exception: exercises the CLI's bug boundary (exit 4)."""

from __future__ import annotations

import click


@click.command("crash")
def command() -> int:
    """Divide by zero."""
    return 1 // 0
