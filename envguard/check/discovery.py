"""Finding the lock a project uses for `envguard check` without --lock.

Lock discovery walks from the current folder up through its parents, stopping at the repository root (a folder
with `.git`) or the filesystem root: in each folder a pyproject.toml with `[tool.envguard] lock` wins, then a
`conda-lock.yml`. The nearest folder with either decides.
"""

from __future__ import annotations

from pathlib import Path

from envguard.config import tool_settings
from envguard.errors import BadInputError

LOCK_NAME = "conda-lock.yml"


def find_lock(start: Path | None = None) -> Path:
    """The project's lock for `envguard check` without --lock (see the module docstring)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            configured = tool_settings(pyproject).get("lock")
            if configured is not None:
                if not isinstance(configured, str) or not configured:
                    raise BadInputError(f"{pyproject}: [tool.envguard] lock must be a path string")
                path = folder / configured
                if not path.is_file():
                    raise BadInputError(
                        f"{pyproject}: [tool.envguard] lock = {configured!r} does not exist; "
                        "create it with `envguard lock` or fix the path"
                    )
                return path
        candidate = folder / LOCK_NAME
        if candidate.is_file():
            return candidate
        if (folder / ".git").exists():
            break  # never pick up a lock from outside the repository
    raise BadInputError(
        f"no {LOCK_NAME} in {here} or its parents (up to the repository root) and no [tool.envguard] lock in "
        "a pyproject.toml; create one "
        "with `envguard lock`, or pass --lock FILE or -f environment.yml"
    )
