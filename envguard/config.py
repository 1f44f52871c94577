"""Project configuration: the `[tool.envguard]` table of a pyproject.toml.

    [tool.envguard]
    lock = "envs/conda-lock.yml"      # relative to the pyproject.toml

Lock discovery (which folder's table decides) is envguard.check.discovery.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from envguard.errors import BadInputError

TYPE_CHECKING = False  # typing (and textio's patterns, below) would cost the check fast path ~5 ms of its ~28
if TYPE_CHECKING:
    from typing import Any

# `--backend` / ENVGUARD_BACKEND (envguard.engine.backends chooses; here so a command's grammar can name the
# choices without loading the backends)
BACKENDS: tuple[str, ...] = ("auto", "conda", "mamba", "micromamba", "embedded")


def active_prefix() -> str:
    """The environment commands act on without SOURCE: an activated venv (`$VIRTUAL_ENV`, which wins even
    inside an activated conda environment: its python is the one on PATH), else `$CONDA_PREFIX`, else this
    interpreter's prefix. Standard library only: the check fast path calls it before anything else is
    imported."""
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        value = os.environ.get(variable)
        if value:
            return value
    return sys.prefix


def tool_settings(pyproject: Path) -> dict[str, Any]:
    """The `[tool.envguard]` table of a pyproject.toml ({} when absent); a broken file is bad input."""
    # lazy: textio's patterns compile on import, off the check fast path (it needs only active_prefix)
    from envguard import textio

    try:
        data = textio.read_bytes(pyproject)
    except OSError:
        return {}
    if b"tool.envguard" not in data:
        return {}  # the common case: skip the TOML parser entirely
    table = _toml_table(_toml_module(), pyproject, data)
    if not isinstance(table, dict):
        raise BadInputError(f"{pyproject}: [tool.envguard] must be a table")
    return table


def _toml_module() -> Any:
    """tomllib (Python 3.11+), else tomli, the same parser published for 3.10 (a dependency there)."""
    try:
        return importlib.import_module("tomllib")
    except ImportError:
        return importlib.import_module("tomli")


def _toml_table(tomllib: Any, pyproject: Path, data: bytes) -> Any:
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{pyproject}: invalid TOML ({exc}); fix the file") from exc
    tool = parsed.get("tool", {})
    return tool.get("envguard", {}) if isinstance(tool, dict) else {}
