"""Finding the lock a project uses for `envguard check` without --lock.

Lock discovery walks from the current folder up through its parents and stops at the repository root (a folder
with `.git`), the home directory or a filesystem boundary (a mount point), never above: in each folder a
pyproject.toml with `[tool.envguard] lock` wins, then a `conda-lock.yml`. The nearest folder with either
decides. As git's safe.directory does (CVE-2022-24765), a pyproject.toml or lock owned by another user than
the current one or root is skipped with a warning naming it: a lock planted in a shared folder such as the
temp dir never decides a check.
"""

from __future__ import annotations

from pathlib import Path

from envguard.config import other_owner, project_folders, tool_settings
from envguard.errors import BadInputError
from envguard.output import command, warn

LOCK_NAME = "conda-lock.yml"


def find_lock(
    start: Path | None = None,
    *,
    instead: str = "--lock FILE or -f environment.yml",
    source: str | None = None,
) -> Path:
    """The project's lock for `envguard check` without --lock (see the module docstring). `instead`: the
    options of the asking command that name a lock or file (sync has --lock alone); `source`: the SOURCE it
    was given, which the suggested `envguard lock` locks (run as printed here, the command then finds it)."""
    here = (start or Path.cwd()).resolve()
    found = discover(here)
    if found is not None:
        return found
    raise BadInputError(
        f"no {LOCK_NAME} in {here} or its parents (up to the repository root, the home folder or the "
        f"filesystem's mount point) and no [tool.envguard] lock in a pyproject.toml{_near(here)}; create "
        f"one with `{command('envguard', 'lock', *([source] if source else []))}`, or pass {instead}"
    )


def _near(here: Path) -> str:
    """`(did you mean conda_lock.yml? ...)` for files here named like the lock (a typo, another suffix)."""
    import difflib

    try:
        names = [p.name for p in here.iterdir() if p.is_file()]
    except OSError:
        return ""
    close = difflib.get_close_matches(LOCK_NAME, names, n=3, cutoff=0.75)
    if not close:
        return ""
    return f" (did you mean {', '.join(close)}? pass it with --lock)"


def discover(start: Path | None = None) -> Path | None:
    """`find_lock` without the error when there is none (None); a broken configuration still raises."""
    here = (start or Path.cwd()).resolve()
    for folder in map(Path, project_folders(str(here))):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _trusted(pyproject):
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
        if candidate.is_file() and _trusted(candidate):
            return candidate
    return None


def _trusted(path: Path) -> bool:
    """Owned by the current user or root; otherwise skipped with a warning naming the file."""
    owner = other_owner(str(path))
    if owner is None:
        return True
    if owner < 0:
        return False  # unreadable
    warn(
        f"{path}: skipped, owned by another user (uid {owner}); a file there could be planted; pass "
        "--lock FILE to use it"
    )
    return False
