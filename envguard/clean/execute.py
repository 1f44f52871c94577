"""Act on a CleanPlan: move items into a trash folder inside the same cache (a rename: nothing is copied, no
symlink is followed), restore the last run (`--undo`), or empty the trash (`--purge-trash`).

Layout: CACHE/.envguard-trash/RUN_ID/manifest.json and RUN_ID/items/<path relative to CACHE>. The manifest is
written before anything moves, so an interrupted run can still be undone.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envguard.atomic import write_text
from envguard.clean.measure import Unreadable, facts, mount_points
from envguard.clean.model import Cache, Candidate, CleanPlan, Entry, Moved, RunResult
from envguard.clean.plan import account
from envguard.errors import OperationalError

MANIFEST = "manifest.json"
ITEMS = "items"

MANIFEST_VERSION = 1  # the trash manifest's own on-disk format (undo reads older runs' manifests)


def new_run_id(now: float | None = None) -> str:
    """A sortable run id: UTC time to the microsecond."""
    now = time.time() if now is None else now
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"


def inside(root: Path, path: Path) -> Path:
    """`path` relative to `root`, refusing anything outside it or reached through a symlinked folder."""
    try:
        relative = path.relative_to(root)
    except ValueError as exc:
        raise OperationalError(f"{path} is outside the cache {root}; refusing to touch it (a bug?)") from exc
    if not relative.parts or ".." in relative.parts:
        raise OperationalError(f"{path}: not a path inside the cache {root}; refusing to touch it")
    current = root
    for part in relative.parts[:-1]:
        current = current / part
        if not stat.S_ISDIR(os.lstat(current).st_mode):
            raise OperationalError(
                f"{current} is a symlink or not a folder; refusing to move anything through it"
            )
    return relative


def trash_dir(cache: Cache, *, create: bool) -> Path | None:
    """The cache's trash folder (created when asked); refuses one that is a symlink or a file."""
    trash = cache.trash
    try:
        mode = os.lstat(trash).st_mode
    except FileNotFoundError:
        if not create:
            return None
        trash.mkdir(mode=0o755)
        return trash
    if not stat.S_ISDIR(mode):
        raise OperationalError(
            f"{trash} is a symlink or a file, not envguard's trash folder; remove it by hand"
        )
    return trash


def move_to_trash(plan: CleanPlan, caches: Sequence[Cache], run_id: str) -> RunResult:
    """Move every planned item into CACHE/.envguard-trash/RUN_ID; failures are collected, not raised."""
    moved: list[Moved] = []
    failed: list[str] = []
    freed = disk = 0
    for cache in caches:
        items = [i for i in plan.items if i.cache == cache.root]
        if not items:
            continue
        moves = [(item, path, inside(cache.root, path)) for item in items for path in item.paths]
        try:
            trash = trash_dir(cache, create=True)
            assert trash is not None
            run = trash / run_id
            run.mkdir()
            _write_manifest(
                run,
                cache,
                run_id,
                [
                    {
                        "source": str(rel),
                        "trash": str(Path(ITEMS) / rel),
                        "category": item.category,
                        "dist": item.dist,
                    }
                    for item, _path, rel in moves
                ],
            )
        except (OSError, OperationalError) as exc:  # a read-only or full cache: nothing of it is moved
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            failed.append(f"{cache.root}: cannot write its trash folder ({reason}); nothing in it was moved")
            continue
        done_items: set[int] = set()
        for item, path, rel in moves:
            target = run / ITEMS / rel
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(path, target)
            except OSError as exc:
                failed.append(f"{path}: cannot move to the trash ({exc.strerror}); left in place")
                continue
            moved.append(Moved(path, target))
            if id(item) not in done_items:
                done_items.add(id(item))
                freed += item.bytes
                disk += item.disk_bytes
    return RunResult("clean", run_id, moved=tuple(moved), failed=tuple(failed), bytes=freed, disk_bytes=disk)


def _write_manifest(
    run: Path, cache: Cache, run_id: str, moves: list[dict[str, str]], undone: bool = False
) -> None:
    data = {
        "schema_version": MANIFEST_VERSION,
        "tool": "envguard clean",
        "run_id": run_id,
        "cache": str(cache.root),
        "undone": undone,
        "moves": moves,
    }
    write_text(run / MANIFEST, json.dumps(data, indent=2) + "\n")


def _read_manifest(run: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((run / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("moves"), list) else None


def runs(cache: Cache) -> list[str]:
    """Run ids in this cache's trash, oldest first."""
    trash = trash_dir(cache, create=False)
    if trash is None:
        return []
    return sorted(e.name for e in os.scandir(trash) if e.is_dir(follow_symlinks=False))


def undo(caches: Sequence[Cache]) -> RunResult:
    """Put back everything the last run (not yet undone) moved, in every cache it touched."""
    pending = {
        c.root: [r for r in runs(c) if not (_read_manifest(c.trash / r) or {}).get("undone", True)]
        for c in caches
    }
    last = max((r for rs in pending.values() for r in rs), default=None)
    if last is None:
        return RunResult("undo", None, skipped=("no envguard clean run to undo in these caches",))
    moved: list[Moved] = []
    skipped: list[str] = []
    failed: list[str] = []
    for cache in caches:
        if last in pending[cache.root]:
            _undo_run(cache, cache.trash / last, moved, skipped, failed)
    return RunResult("undo", last, moved=tuple(moved), skipped=tuple(skipped), failed=tuple(failed))


def _undo_run(cache: Cache, run: Path, moved: list[Moved], skipped: list[str], failed: list[str]) -> None:
    manifest = _read_manifest(run) or {"moves": []}
    left: list[dict[str, str]] = []
    for move in manifest["moves"]:
        source = cache.root / str(move["source"])
        held = run / str(move["trash"])
        inside(cache.root, source)
        inside(run, held)
        if not os.path.lexists(held):
            continue
        if os.path.lexists(source):
            skipped.append(f"{source} exists again; its trashed copy stays in {held}")
            left.append(move)
            continue
        try:
            os.rename(held, source)
        except OSError as exc:
            failed.append(f"{held}: cannot restore ({exc.strerror})")
            left.append(move)
            continue
        moved.append(Moved(held, source))
    if left:
        _write_manifest(run, cache, run.name, left, undone=True)
    else:
        failed += _rmtree(run)
        _remove_if_empty(cache.trash)


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()


def purge(caches: Sequence[Cache]) -> RunResult:
    """Delete every cache's trash folder for good; bytes are what the disk gains (inode-deduplicated)."""
    freed = disk = 0
    failed: list[str] = []
    done: list[Path] = []
    for cache in caches:
        trash = trash_dir(cache, create=False)
        if trash is None:
            continue
        try:
            found = facts([trash])
        except Unreadable as exc:
            failed.append(f"{exc}; trash left as it is")
            continue
        candidate = Candidate(Entry(cache, str(trash), "temp"), "temp-log", "trash")
        [item] = account([(candidate, found)])
        errors = _rmtree(trash)
        failed += errors
        if not errors:
            freed += item.bytes
            disk += item.disk_bytes
            done.append(trash)
    return RunResult(
        "purge-trash", None, removed=tuple(done), failed=tuple(failed), bytes=freed, disk_bytes=disk
    )


def _rmtree(path: Path, mounts: frozenset[str] | None = None) -> list[str]:
    """Delete a folder tree without following a symlink (every folder is opened O_NOFOLLOW relative to its
    parent's descriptor) and without entering another file system: a mount point inside, or a folder of
    another device, stays with everything above it, named in the errors returned."""
    points = mount_points() if mounts is None else mounts
    errors: list[str] = []
    try:
        parent = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        return [f"{path.parent}: cannot open ({exc.strerror})"]
    try:
        device = os.fstat(parent).st_dev
        _remove(parent, path.name, str(path), device, points, errors)
    finally:
        os.close(parent)
    return errors


_NOFOLLOW_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _remove(
    dir_fd: int, name: str, shown: str, device: int, points: frozenset[str], errors: list[str]
) -> bool:
    """Remove `name` in the folder `dir_fd`; True when it is gone."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=dir_fd)
            return True
        if st.st_dev != device or shown in points:
            errors.append(f"{shown}: another file system is mounted there; left in place (unmount it first)")
            return False
        fd = os.open(name, _NOFOLLOW_DIR, dir_fd=dir_fd)
    except FileNotFoundError:
        return True
    except OSError as exc:
        errors.append(f"{shown}: cannot delete ({exc.strerror})")
        return False
    try:
        if os.fstat(fd).st_dev != device:  # mounted between the stat and the open
            errors.append(f"{shown}: another file system is mounted there; left in place (unmount it first)")
            return False
        names = os.listdir(fd)
        gone = [_remove(fd, child, f"{shown}/{child}", device, points, errors) for child in names]
    except OSError as exc:
        errors.append(f"{shown}: cannot list ({exc.strerror})")
        return False
    finally:
        os.close(fd)
    if not all(gone):
        return False
    try:
        os.rmdir(name, dir_fd=dir_fd)
    except OSError as exc:
        errors.append(f"{shown}: cannot delete ({exc.strerror})")
        return False
    return True
