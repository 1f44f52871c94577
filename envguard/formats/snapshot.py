"""Read envguard's own snapshot JSON."""

from __future__ import annotations

import json
from pathlib import Path

from envguard.errors import BadInputError
from envguard.model import Environment, from_dict
from envguard.textio import read_text


def read(path: Path) -> Environment:
    """Load a snapshot written by `envguard snapshot`."""
    text = read_text(path)
    try:
        data = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise BadInputError(
            f"{path}:{line}: invalid JSON ({str(exc).split(':')[0]}); re-create it with `envguard snapshot`"
        ) from exc
    if not isinstance(data, dict):
        raise BadInputError(f"{path}: not an envguard snapshot (expected a JSON object)")
    return from_dict(data, origin=str(path))
