"""Project configuration: the `[tool.envguard]` table of a pyproject.toml.

    [tool.envguard]
    lock = "envs/conda-lock.yml"      # relative to the pyproject.toml
    environment = ".venv"             # the environment commands act on without SOURCE (or "name:ENV")

The project's folders (from the working folder up to the repository root, the home folder or a mount point)
are `project_folders`; lock discovery (which folder's table decides) is envguard.check.discovery.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from envguard.errors import BadInputError

TYPE_CHECKING = False  # typing (and textio's patterns, below) would cost the check fast path ~5 ms of its ~28
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

# `--backend` / ENVGUARD_BACKEND (envguard.engine.backends chooses; here so a command's grammar can name the
# choices without loading the backends)
BACKENDS: tuple[str, ...] = ("auto", "conda", "mamba", "micromamba", "embedded")


def active_prefix(start: str | None = None) -> str | None:
    """The environment commands act on without SOURCE, as SOURCE text: the project's `[tool.envguard]
    environment` (found from `start`, default the working folder; a path relative to its pyproject.toml, or
    `name:ENV`), else an activated venv (`$VIRTUAL_ENV`, which wins even inside an activated conda
    environment: its python is the one on PATH), else `$CONDA_PREFIX`; None when none says (never this
    interpreter's own prefix: envguard installed with pipx would check, and sync, itself). Standard library
    only: the check fast path calls it before anything else is imported."""
    configured = project_environment(start)
    if configured is not None:
        return configured
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        value = os.environ.get(variable)
        if value:
            return value
    return None


def project_environment(start: str | None = None) -> str | None:
    """The nearest pyproject.toml's `[tool.envguard] environment` (an absolute path or `name:ENV`), None when
    no pyproject.toml in the project's folders sets it. A pyproject.toml owned by another user is skipped
    (lock discovery warns about it); a value that is not a string, or a folder that does not exist, is bad
    input naming the file."""
    for folder in project_folders(os.path.realpath(start or os.getcwd())):
        pyproject = os.path.join(folder, "pyproject.toml")
        if not os.path.isfile(pyproject) or other_owner(pyproject) is not None:
            continue
        value = tool_settings(Path(pyproject)).get("environment")
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise BadInputError(f"{pyproject}: [tool.envguard] environment must be a path or name:ENV string")
        if value.startswith("name:"):
            return value
        path = os.path.join(folder, os.path.expanduser(value))
        if not os.path.isdir(path):
            raise BadInputError(
                f"{pyproject}: [tool.envguard] environment = {value!r} is not a folder; create the "
                "environment there or fix the path"
            )
        return os.path.normpath(path)
    return None


def project_folders(here: str) -> Iterator[str]:
    """`here` and its parents, up to and including the repository root (a folder with `.git`) or the home
    folder, and never across a filesystem boundary (a mount point): where a project's configuration is
    looked for."""
    home = _home()
    try:
        device: int | None = os.stat(here).st_dev
    except OSError:
        device = None
    folder = here
    while True:
        try:
            if device is not None and os.stat(folder).st_dev != device:
                return  # a mount point: the parent folder belongs to another filesystem
        except OSError:
            return
        yield folder
        if os.path.exists(os.path.join(folder, ".git")) or folder == home:
            return  # never above the repository or the home folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def other_owner(path: str) -> int | None:
    """The owner's uid when a file is owned by someone other than the current user or root (a file planted
    in a shared folder such as the temp dir must not configure envguard, as git's safe.directory); None when
    it may be trusted. An unreadable file is not trusted (-1)."""
    if not hasattr(os, "geteuid"):
        return None
    try:
        owner = os.stat(path).st_uid
    except OSError:
        return -1
    return None if owner in (os.geteuid(), 0) else owner


def _home() -> str | None:
    try:
        return os.path.realpath(os.path.expanduser("~"))
    except (OSError, RuntimeError):
        return None


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
