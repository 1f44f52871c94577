"""The columns human output is laid out for (standard library os and sys only: the check fast path asks too).

Tables take `terminal_width()`: COLUMNS, else the terminal's, else PIPE_WIDTH for a pipe or a file. Plain
report lines (check's findings, the drift sync and verify still find) take `line_width()`: COLUMNS, else
stdout's terminal, else None: into a pipe or a file each stays one whole line, for grep and CI logs."""

from __future__ import annotations

import os
import sys

NARROW = 100  # below this many columns tables drop or merge their secondary columns
PIPE_WIDTH = 120  # a pipe or a file: wide enough for one package per line, narrow enough to read in a CI log


def _columns() -> int | None:
    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) >= 20 else None


def _tty_width(stream: object) -> int | None:
    try:
        if stream.isatty():  # type: ignore[attr-defined]
            return max(20, os.get_terminal_size(stream.fileno()).columns)  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        pass
    return None


def terminal_width() -> int:
    """The columns human views are rendered for: COLUMNS when set (as rich and click honour it), else the
    terminal's (stdout, then stderr), else PIPE_WIDTH for a pipe or a file."""
    return _columns() or _tty_width(sys.stdout) or _tty_width(sys.stderr) or PIPE_WIDTH


def line_width() -> int | None:
    """The columns plain report lines wrap at: COLUMNS when set, else stdout's terminal; None (no wrapping)
    when stdout is a pipe or a file."""
    return _columns() or _tty_width(sys.stdout)
