"""A command that fails with an unexpected exception: exercises the CLI's bug boundary (exit 4)."""

from __future__ import annotations

from envguard.cli.options import declared


@declared("crash")
def crash() -> int:
    """Divide by zero."""
    return 1 // 0
