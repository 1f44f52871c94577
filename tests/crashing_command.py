"""A command that fails with an unexpected exception: exercises the CLI's bug boundary (exit 4)."""

from __future__ import annotations

from envguard.cli.grammar import Command

GRAMMAR = Command("crash")


def run() -> int:
    """Divide by zero."""
    return 1 // 0
