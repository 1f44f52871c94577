"""Project configuration: `[tool.envguard]` in pyproject.toml, and finding the lock a project uses.

    [tool.envguard]
    lock = "envs/conda-lock.yml"      # relative to the pyproject.toml

Lock discovery walks from the current folder up through its parents, stopping at the repository root (a folder
with `.git`) or the filesystem root: in each folder a pyproject.toml with `[tool.envguard] lock` wins, then a
`conda-lock.yml`. The nearest folder with either decides.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from envguard.errors import BadInputError

_SECTION = re.compile(r"^\s*\[tool\.envguard\]\s*$")
_LOCK_LINE = re.compile(r"""^\s*lock\s*=\s*(["'])(.*?)\1\s*(#.*)?$""")


def tool_settings(pyproject: Path) -> dict[str, Any]:
    """The `[tool.envguard]` table of a pyproject.toml ({} when absent); a broken file is bad input."""
    try:
        data = pyproject.read_bytes()
    except OSError:
        return {}
    if b"tool.envguard" not in data:
        return {}  # the common case: skip the TOML parser entirely
    try:
        tomllib = importlib.import_module("tomllib")
    except ImportError:  # Python 3.10: a minimal reading of `lock = "..."` is all envguard needs
        return _minimal(data.decode("utf-8", errors="replace"))
    table = _toml_table(tomllib, pyproject, data)
    if not isinstance(table, dict):
        raise BadInputError(f"{pyproject}: [tool.envguard] must be a table")
    return table


def _toml_table(tomllib: Any, pyproject: Path, data: bytes) -> Any:
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{pyproject}: invalid TOML ({exc}); fix the file") from exc
    return parsed.get("tool", {}).get("envguard", {})


def _minimal(text: str) -> dict[str, Any]:
    inside = False
    for line in text.splitlines():
        if line.lstrip().startswith("["):
            inside = bool(_SECTION.match(line))
            continue
        match = _LOCK_LINE.match(line) if inside else None
        if match:
            return {"lock": match.group(2)}
    return {}
