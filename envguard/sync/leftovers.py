"""What a sync killed midway (SIGKILL, the OOM killer, a CI timeout) leaves in an environment, and its removal
by the next sync.

rattler unlinks a package's files, then its record; it writes records through temporary files, probes for
symlinks with a link in the prefix and tags the prefix CACHEDIR.TAG while it links. A kill in between leaves
folders emptied of a removed package's files that no record owns any more, the tag, and the rest
(`envguard.engine.install.link_leftovers`). So before changing an environment, sync writes beside it
(`.NAME.envguard-sync`, as `envguard.engine.target` writes its journal) the folders the change may empty and
whether the prefix had a CACHEDIR.TAG, and removes that file once the change is complete. The next sync of the
environment, holding its lock, removes those folders that were left empty and the other leftovers, then plans.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from envguard.atomic import clean_stale_temps, write_text
from envguard.engine import target as targets
from envguard.engine.install import link_leftovers
from envguard.model import Package
from envguard.textio import read_bytes

SUFFIX = ".envguard-sync"
TAG = "CACHEDIR.TAG"


def marker_path(prefix: Path) -> Path:
    prefix = Path(os.path.abspath(prefix))  # "" or "." names the working folder, which has a name
    return prefix.with_name(f".{prefix.name}{SUFFIX}")


def folders_of(prefix: Path, packages: Iterable[Package]) -> list[str]:
    """The folders (relative to `prefix`, parents included) of the files `packages`' conda-meta records list:
    what unlinking them may leave empty."""
    found: set[str] = set()
    for package in packages:
        record = prefix / "conda-meta" / f"{package.name}-{package.version}-{package.build}.json"
        try:
            files = json.loads(read_bytes(record)).get("files")
        except (OSError, ValueError, RecursionError, AttributeError):
            continue
        for name in files if isinstance(files, list) else ():
            folder = posixpath.dirname(name) if isinstance(name, str) else ""
            while folder and folder not in found:
                found.add(folder)
                folder = posixpath.dirname(folder)
    return sorted(found)


@contextlib.contextmanager
def changing(prefix: Path, folders: list[str]) -> Iterator[None]:
    """Run the change with the folders it may empty written beside `prefix`; the file goes once the change is
    complete (after an error it stays: the next sync, which the error asks for, finishes the cleanup)."""
    tagged = os.path.lexists(prefix / TAG)  # rattler tags the prefix while it links (engine.install.link)
    document = {"pid": os.getpid(), "folders": folders, "tagged": tagged}
    write_text(marker_path(prefix), json.dumps(document) + "\n")
    yield
    marker_path(prefix).unlink(missing_ok=True)


def remove(prefix: Path) -> tuple[str, ...]:
    """Remove what a killed sync or install left in `prefix`, holding its lock: one warning naming it, or ()
    when nothing was left (the usual case: two directory listings and no lock taken)."""
    if not os.path.basename(os.path.abspath(prefix)):  # the root folder: no environment, nothing beside it
        return ()
    if not marker_path(prefix).exists() and not link_leftovers(prefix):
        return ()
    with targets.hold(prefix):  # a sync still running finishes first (and removes its own file)
        recorded = _recorded(prefix)
        emptied = _empty_folders(prefix, recorded.get("folders"))
        found = link_leftovers(prefix)
        if recorded and recorded.get("tagged") is False and os.path.lexists(prefix / TAG):
            found.append(prefix / TAG)
        for path in found:
            with contextlib.suppress(OSError):
                path.unlink()
        marker_path(prefix).unlink(missing_ok=True)
        clean_stale_temps(marker_path(prefix))
    if not emptied and not found:
        return ()
    shown = [*(str(p.relative_to(prefix)) for p in found), *(f"{f}/" for f in emptied[:5])]
    more = f" and {len(emptied) - 5} more empty folder(s)" if len(emptied) > 5 else ""
    return (f"removed what an interrupted sync or install left in {prefix}: {', '.join(shown)}{more}",)


def _recorded(prefix: Path) -> dict[str, Any]:
    """The killed sync's file ({} when there is none, or one this envguard cannot read)."""
    try:
        document = json.loads(read_bytes(marker_path(prefix)))
    except (OSError, ValueError, RecursionError):
        return {}
    return document if isinstance(document, dict) else {}


def _empty_folders(prefix: Path, folders: object) -> list[str]:
    """Remove each of `folders` that is an empty folder inside `prefix`, deepest first; those removed."""
    removed = []
    named = [f for f in folders if isinstance(f, str)] if isinstance(folders, list) else []
    for folder in sorted(named, key=lambda f: f.count("/"), reverse=True):
        parts = folder.split("/")
        if folder.startswith("/") or any(p in ("", ".", "..") for p in parts):
            continue  # never outside the prefix
        with contextlib.suppress(OSError):  # not empty, not a folder, gone: left as it is
            os.rmdir(prefix.joinpath(*parts))
            removed.append(folder)
    return removed
