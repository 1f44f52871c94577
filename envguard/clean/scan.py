"""List what a cache holds, without following a symlink: extracted packages, tarballs, index caches, partial
downloads, temporary files and logs. Identifies; does not judge (that is `plan`).

An extracted package is a folder with `info/index.json`; its identity (`name-version-build`) comes from that
file, except when the folder's own name is already known to be in use, where reading it could change nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from envguard.clean.model import PACKAGE_SUFFIXES, TRASH_DIR, Cache, Entry, EntryKind
from envguard.clean.usage import strip_archive
from envguard.textio import read_bytes

PARTIAL_SUFFIXES = (".partial", ".part")
TEMP_SUFFIXES = (".c~", ".trash")  # conda's CONDA_TEMP_EXTENSIONS
TEMP_DIRS = (".logs", ".trash")  # conda's logs dir and trash dir inside pkgs
TEMP_PREFIXES = (".tmp",)  # tempfile-style folders left by interrupted extractions
INDEX_KEEP_SUFFIXES = (".lock",)
META_NAMES = ("urls.txt", "urls", "CACHEDIR.TAG")
META_SUFFIXES = (".lock", ".conda_lock")


def scan(cache: Cache, known: Callable[[str], bool] = lambda _name: False) -> tuple[list[Entry], list[str]]:
    """Entries at the top of `cache.pkgs` plus everything inside its index dirs; problems for what cannot be
    read. `known(folder_name)` says a package folder is in use by name, so its index.json need not be read."""
    problems: list[str] = []
    try:
        with os.scandir(cache.pkgs) as listing:
            raw = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        return [], [f"{cache.pkgs}: cannot list ({exc.strerror}); this cache is left alone"]
    names = {e.name for e in raw}
    skip = {TRASH_DIR, *(d.name for d in cache.index_dirs if d.parent == cache.pkgs)}
    entries: list[Entry] = []
    for item in raw:
        if item.name in skip:
            continue
        entry, problem = _classify(cache, item, names, known)
        if problem:
            problems.append(problem)
        if entry is not None:
            entries.append(entry)
    companions = {c for e in entries for c in e.companions}
    entries = [e for e in entries if e.path not in companions]
    for index_dir in cache.index_dirs:
        entries += _index_entries(cache, index_dir, problems)
    return entries, problems


def _classify(
    cache: Cache, item: os.DirEntry[str], names: set[str], known: Callable[[str], bool]
) -> tuple[Entry | None, str]:
    if item.is_dir(follow_symlinks=False):
        if item.name not in TEMP_DIRS and not item.name.startswith(TEMP_PREFIXES):
            return _package(cache, item, names, known)
        kind: EntryKind = "temp"
    elif item.is_symlink():
        kind = "other"
    else:
        kind = _file_kind(item.name)
    try:
        mtime = item.stat(follow_symlinks=False).st_mtime
    except OSError as exc:
        return None, f"{item.path}: cannot stat ({exc.strerror}); left alone"
    dist = strip_archive(item.name) if kind == "tarball" else ""
    return Entry(cache, item.path, kind, dist=dist, mtime=mtime), ""


def _file_kind(name: str) -> EntryKind:
    if name in META_NAMES or name.endswith(META_SUFFIXES):
        return "meta"
    if name.endswith(PACKAGE_SUFFIXES):
        return "tarball"
    if name.endswith(PARTIAL_SUFFIXES):
        return "partial"
    if name.endswith(TEMP_SUFFIXES):
        return "temp"
    return "other"


def _package(
    cache: Cache, item: os.DirEntry[str], names: set[str], known: Callable[[str], bool]
) -> tuple[Entry | None, str]:
    name = item.name
    index_json = os.path.join(item.path, "info", "index.json")
    if not os.path.lexists(index_json) or os.path.lexists(os.path.join(item.path, "conda-meta")):
        return Entry(cache, item.path, "other"), ""  # not a package, or an environment someone put here
    lock = f"{name}.lock"
    companions = (os.path.join(cache.pkgs, lock),) if lock in names else ()
    dist, problem = (name, "") if known(name) else _package_dist(index_json)
    if problem:
        return Entry(cache, item.path, "other"), problem
    try:
        mtime = item.stat(follow_symlinks=False).st_mtime  # an extraction in progress is recent
    except OSError as exc:
        return None, f"{item.path}: cannot stat ({exc.strerror}); left alone"
    return Entry(cache, item.path, "package", dist=dist or name, mtime=mtime, companions=companions), ""


def _package_dist(index_json: str) -> tuple[str, str]:
    """`name-version-build` from info/index.json; a problem when it cannot be read (the package is then
    kept)."""
    if os.path.islink(index_json):
        return "", f"{index_json}: is a symlink; package left alone"
    try:
        data = json.loads(read_bytes(index_json))
    except OSError as exc:
        return "", f"{index_json}: cannot read ({exc.strerror}); package left alone"
    except ValueError:
        return "", f"{index_json}: not valid JSON; package left alone"
    if not isinstance(data, dict):
        return "", f"{index_json}: not a JSON object; package left alone"
    parts = [data.get(k) for k in ("name", "version", "build")]
    if all(isinstance(p, str) and p for p in parts):
        return "-".join(str(p) for p in parts), ""
    return "", ""


def _index_entries(cache: Cache, index_dir: Path, problems: list[str]) -> list[Entry]:
    try:
        with os.scandir(index_dir) as listing:
            raw = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        problems.append(f"{index_dir}: cannot list ({exc.strerror}); index cache left alone")
        return []
    entries: list[Entry] = []
    for item in raw:
        if item.name.endswith(INDEX_KEEP_SUFFIXES):
            continue
        try:
            mtime = item.stat(follow_symlinks=False).st_mtime
        except OSError as exc:
            problems.append(f"{item.path}: cannot stat ({exc.strerror}); left alone")
            continue
        entries.append(Entry(cache, item.path, "index", mtime=mtime))
    return entries
