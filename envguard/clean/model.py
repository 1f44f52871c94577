"""Facts and decisions of `envguard clean`: caches, environments, usage, cache entries, the plan.

All frozen; the scanning modules produce them, `plan` decides over them, `execute` acts on a CleanPlan.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Category = Literal["unused-package", "tarball", "index-cache", "partial-download", "temp-log"]
CATEGORIES: tuple[Category, ...] = (
    "unused-package",
    "tarball",
    "index-cache",
    "partial-download",
    "temp-log",
)
CATEGORY_TITLES: dict[Category, str] = {
    "unused-package": "Unused extracted packages",
    "tarball": "Tarballs (unused or already extracted)",
    "index-cache": "Repodata / index caches",
    "partial-download": "Partial downloads",
    "temp-log": "Logs and temporary files",
}
CacheKind = Literal["conda", "rattler"]
EntryKind = Literal["package", "tarball", "index", "partial", "temp", "meta", "other"]

TRASH_DIR = ".envguard-trash"
PACKAGE_SUFFIXES = (".conda", ".tar.bz2")


@dataclass(frozen=True, slots=True)
class Cache:
    """A package cache. `root` holds the trash; packages live in `pkgs` (== root for conda layouts, root/pkgs
    for a rattler/pixi cache root, whose repodata lives beside it)."""

    root: Path
    pkgs: Path
    kind: CacheKind
    origin: str
    index_dirs: tuple[Path, ...] = ()

    @property
    def trash(self) -> Path:
        return self.root / TRASH_DIR


@dataclass(frozen=True, slots=True)
class EnvRef:
    """An environment whose conda-meta decides what is in use."""

    prefix: Path
    origin: str


@dataclass(frozen=True, slots=True)
class Usage:
    """What the discovered environments and locks reference. `dists` are `name-version-build` strings;
    `dir_names` are basenames of extracted_package_dir / link.source."""

    dists: frozenset[str] = frozenset()
    dir_names: frozenset[str] = frozenset()
    environments: tuple[EnvRef, ...] = ()
    locks: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    complete: bool = True

    def uses(self, dist: str, dir_name: str) -> bool:
        return dist in self.dists or dir_name in self.dir_names or dir_name in self.dists


@dataclass(frozen=True, slots=True)
class Entry:
    """One top-level thing found in a cache, identified but not yet judged. Paths are plain strings: a large
    cache has tens of thousands of entries and pathlib objects would dominate the scan."""

    cache: Cache
    path: str
    kind: EntryKind
    dist: str = ""
    mtime: float = 0.0
    companions: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


@dataclass(frozen=True, slots=True)
class Candidate:
    """An entry the plan would remove, and why."""

    entry: Entry
    category: Category
    reason: str


@dataclass(frozen=True, slots=True)
class FileFact:
    """lstat facts of one path inside a candidate (never following symlinks)."""

    dev: int
    ino: int
    nlink: int
    size: int
    blocks: int
    is_dir: bool


@dataclass(frozen=True, slots=True)
class Item:
    """A planned removal with the bytes it really frees (inode-deduplicated, links outside counted)."""

    category: Category
    cache: Path
    paths: tuple[Path, ...]
    dist: str
    reason: str
    bytes: int
    disk_bytes: int
    linked_elsewhere: int = 0


@dataclass(frozen=True, slots=True)
class LockHolder:
    """A live lock on a cache: which file, which tool's convention, and which process when known."""

    lock_file: Path
    convention: str
    pid: int | None = None
    command: str | None = None

    def describe(self) -> str:
        who = f"process {self.pid}" if self.pid else "another process"
        if self.command:
            who += f" ({self.command})"
        return f"{who} holds {self.lock_file} ({self.convention} lock)"


@dataclass(frozen=True, slots=True)
class CacheState:
    """Per-cache summary shown beside the plan."""

    cache: Cache
    packages: int = 0
    in_use: int = 0
    trash_runs: tuple[str, ...] = ()
    trash_disk_bytes: int = 0
    holders: tuple[LockHolder, ...] = ()


@dataclass(frozen=True, slots=True)
class CleanPlan:
    """Everything `clean` would do, and everything it decided to keep and why."""

    items: tuple[Item, ...]
    caches: tuple[CacheState, ...]
    usage: Usage
    kept: dict[str, int] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def totals(self) -> tuple[int, int, int]:
        """(count, bytes, disk_bytes) over all items."""
        return (len(self.items), sum(i.bytes for i in self.items), sum(i.disk_bytes for i in self.items))

    def by_category(self) -> dict[Category, tuple[int, int, int]]:
        result: dict[Category, tuple[int, int, int]] = {}
        for category in CATEGORIES:
            items = [i for i in self.items if i.category == category]
            result[category] = (len(items), sum(i.bytes for i in items), sum(i.disk_bytes for i in items))
        return result


@dataclass(frozen=True, slots=True)
class Moved:
    """One path moved by the executor (to the trash, or back from it)."""

    source: Path
    target: Path


@dataclass(frozen=True, slots=True)
class RunResult:
    """What an executor action did: moved paths, failures, and the bytes freed or put aside."""

    action: Literal["clean", "undo", "purge-trash"]
    run_id: str | None
    moved: tuple[Moved, ...] = ()
    failed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    removed: tuple[Path, ...] = ()
    bytes: int = 0
    disk_bytes: int = 0
