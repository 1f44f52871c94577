"""The package cache is trusted only as far as the verified archive vouches for it: an extracted folder in
pkgs_dir is compared, file by file, with the archive's own info/paths.json (sha256 and size) before rattler
may link from it. A folder that differs (an edited, added-to or truncated file: a poisoned CI cache) is
removed so rattler re-extracts it from the verified archive, and reported naming the package and the file.

Hashing every extracted file on every create/verify would cost a `check --files` of the whole environment
(GBs for a CUDA torch): a folder that was proved against an archive is remembered (envguard's private cache,
`verified-pkgs/`) with the stat signature (size, mtime, inode, device) of each file it links and of its own
info/paths.json, for that archive's digest, and only for the machine's current boot
(`/proc/sys/kernel/random/boot_id`). While every one of those signatures is unchanged the folder is not hashed
again. ctime cannot be part of it: rattler hard-links these very files into each environment, and every link
or unlink changes their ctime. A replaced or rewritten file gets another inode or mtime; a cache restored on a
CI runner (a new boot) is always hashed in full, so a poisoned CI cache cannot bring a forged memo along.
Files changed within the last 2 s are not remembered (a coarse clock could give a second edit the same
signature). What a stat signature cannot see: an in-place rewrite of a file that keeps its size and has its
mtime set back on purpose, within the same boot, by someone who can already write to the cache."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard import __version__
from envguard.engine.archives import Archive
from envguard.errors import BackendError
from envguard.hashing import file_digest
from envguard.model import Package

ARCHIVE_SUFFIXES = (".conda", ".tar.bz2")


@dataclass(frozen=True)
class Poisoned:
    """An extracted package whose `file` differs from its verified archive."""

    package: Package
    folder: Path
    file: str
    problem: str

    def describe(self) -> str:
        return (
            f"{self.package.name} {self.package.version} {self.package.build}: {self.file} in the package "
            f"cache {self.folder} {self.problem} (not what the verified archive holds)"
        )


def extracted_folder(archive: Archive, pkgs_dir: Path) -> Path:
    name = archive.path.name
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            return pkgs_dir / name[: -len(suffix)]
    return pkgs_dir / name


def check_and_heal(archives: Sequence[Archive], pkgs_dir: Path) -> list[Poisoned]:
    """Every extracted folder of these (verified) conda archives that differs from its archive, removed.
    An archive whose paths.json names a file outside the prefix is refused (BackendError) before anything is
    linked (rattler would abort the process)."""
    found: list[Poisoned] = []
    memo = _Memo(pkgs_dir)
    for archive in archives:
        if archive.package.manager != "conda" or not archive.verified:
            continue
        folder = extracted_folder(archive, pkgs_dir)
        if memo.holds(folder, archive):
            continue  # proved against this very archive, and not a file of it has changed since
        paths = _archive_paths(archive.path)
        _refuse_escaping_paths(archive, paths)
        if not folder.is_dir():
            continue  # rattler extracts it from the verified archive
        problem, signed = _compare(folder, paths)
        if problem is not None:
            found.append(Poisoned(archive.package, folder, *problem))
            shutil.rmtree(folder, ignore_errors=True)
            folder.with_name(folder.name + ".lock").unlink(missing_ok=True)
        elif signed is not None:
            memo.remember(folder, archive, signed)
    memo.save()
    return found


def _archive_paths(archive: Path) -> list[Any] | None:
    """The archive's own info/paths.json entries, or None when rattler cannot read it (the link step then
    reports the archive)."""
    from rattler.package import PathsJson

    try:
        return list(PathsJson.from_package_archive(archive).paths)
    except Exception:  # rattler raises its own exception types
        return None


def _refuse_escaping_paths(archive: Archive, paths: list[Any] | None) -> None:
    for entry in paths or ():
        relative = str(entry.relative_path)
        if relative.startswith(("/", "\\")) or ".." in Path(relative).parts or ":" in relative[:3]:
            raise BackendError(
                f"{archive.package.describe()}: its paths.json installs {relative!r}, outside the "
                "environment; refusing to install this package (a broken or hostile archive)"
            )


def first_difference(archive: Path, folder: Path) -> tuple[str, str] | None:
    """(file, problem) for the first file of `folder` that differs from `archive`'s paths.json, else None."""
    return _compare(folder, _archive_paths(archive))[0]


Signed = list[list[Any]]  # [relative path, size, mtime_ns, inode, device] per file


def _compare(folder: Path, paths: list[Any] | None) -> tuple[tuple[str, str] | None, Signed | None]:
    """The first difference between `folder` and the archive's entries, and (when there is none) the stat
    signature of every file that was proved, taken before it was hashed."""
    from rattler.package import PathsJson

    if paths is None:  # an archive rattler cannot read: let the link step report it
        return None, None
    try:  # rattler links what the folder's own paths.json lists: it must list exactly the archive's files
        index = folder / "info" / "paths.json"
        signed = [_signature("info/paths.json", index)]
        listed = {str(e.relative_path) for e in PathsJson.from_package_directory(folder).paths}
    except Exception:
        return ("info/paths.json", "is unreadable"), None
    if listed != {str(e.relative_path) for e in paths}:
        return ("info/paths.json", "lists other files"), None
    for entry in paths:
        relative = str(entry.relative_path)
        path = folder / relative
        if not entry.path_type.hardlink:
            continue
        if not path.is_file() or path.is_symlink():
            return (relative, "is missing"), None
        signed.append(_signature(relative, path))
        size = entry.size_in_bytes
        if size is not None and signed[-1][1] != size:
            return (relative, f"has {signed[-1][1]} bytes instead of {size}"), None
        digest = entry.sha256
        if digest is not None and file_digest(path) != bytes(digest).hex():
            return (relative, "has different content (sha256)"), None
    return None, signed


def _signature(relative: str, path: Path) -> list[Any]:
    st = os.stat(path)
    return [relative, st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]


class _Memo:
    """Folders proved against an archive digest, with their files' signatures (see the module docstring)."""

    FORMAT = 1
    FRESH_NS = 2_000_000_000

    def __init__(self, pkgs_dir: Path) -> None:
        from envguard.cache import cache_dir

        real = os.path.realpath(pkgs_dir)
        name = f"{zlib.crc32(real.encode('utf-8', 'replace')):08x}.json"
        self._where = cache_dir() / "verified-pkgs" / name
        self._header = [self.FORMAT, __version__, real, _boot_id()]
        self._entries: dict[str, list[Any]] = {}
        self._changed = False
        try:
            data = json.loads(self._where.read_bytes())
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("header") == self._header:
            entries = data.get("folders")
            if isinstance(entries, dict):
                self._entries = entries

    def holds(self, folder: Path, archive: Archive) -> bool:
        entry = self._entries.get(folder.name)
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == _proof(archive)):
            return False
        signed = entry[1]
        if not isinstance(signed, list) or not signed:
            return False
        base = os.path.join(folder, "")  # plain strings: thousands of files, pathlib would double the cost
        stat = os.stat
        try:
            for item in signed:
                st = stat(base + item[0])
                if [item[0], st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev] != item:  # _signature
                    return False
        except (OSError, TypeError, IndexError, ValueError):
            return False
        return True

    def remember(self, folder: Path, archive: Archive, signed: Signed) -> None:
        now = time.time_ns()
        if not self._header[3] or any(now - item[2] <= self.FRESH_NS for item in signed):
            return
        self._entries[folder.name] = [_proof(archive), signed]
        self._changed = True

    def save(self) -> None:
        if not self._changed:
            return
        from envguard.atomic import write_bytes
        from envguard.errors import EnvguardError

        document = {"header": self._header, "folders": self._entries}
        with contextlib.suppress(EnvguardError, OSError):  # a memo not written only costs time next run
            write_bytes(self._where, json.dumps(document).encode("utf-8"), durable=False, private=True)


def _boot_id() -> str:
    """This boot's random id ('' where the kernel does not give one: then nothing is remembered)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except (OSError, ValueError):
        return ""


def _proof(archive: Archive) -> list[str]:
    """What the memo is valid for: this archive's digest, as proved against the lock this run."""
    return [archive.algorithm, archive.actual, archive.path.name]
