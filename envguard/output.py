"""Small shared helpers for commands: JSON emission, writing to -o FILE or stdout, warnings to stderr."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from envguard.atomic import write_text


def dumps(data: Any) -> str:
    """Deterministic JSON: sorted keys within objects where the producer did not order them, 2-space indent."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def emit(text: str, output: str | None) -> None:
    """Write `text` atomically to `output`, or to stdout when it is None or '-'."""
    if output and output != "-":
        write_text(Path(output), text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def warn(message: str) -> None:
    sys.stderr.write(f"envguard: warning: {message}\n")
