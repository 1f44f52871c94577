"""The package cache is trusted only as far as the verified archive vouches for it: an extracted folder in
pkgs_dir is compared, file by file, with the archive's own info/paths.json (sha256 and size) before rattler
may link from it. A folder that differs (an edited, added-to or truncated file: a poisoned CI cache) is
removed so rattler re-extracts it from the verified archive, and reported naming the package and the file.

Hashing every extracted file on every create/verify would cost a `check --files` of the whole environment
(GBs for a CUDA torch): a folder that was proved against an archive is remembered for this boot
(envguard.cache.packages). What a stat signature cannot see: an in-place rewrite of a file that keeps its size
and has its mtime set back on purpose, within the same boot, by someone who can already write to the cache."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.atomic import child
from envguard.cache import entry as cache_entry
from envguard.cache import save
from envguard.cache.digests import file_digest
from envguard.cache.packages import Proof, ProvedFolders, Signed, signature
from envguard.engine.archives import Archive
from envguard.errors import BadInputError
from envguard.model import Package

ARCHIVE_SUFFIXES = (".conda", ".tar.bz2")
SAFE = "safe-paths-2"  # archives whose paths.json was found safe, by sha256 (2: owned paths refused too)


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
            return child(pkgs_dir, name[: -len(suffix)])
    return child(pkgs_dir, name)


def check_and_heal(archives: Sequence[Archive], pkgs_dir: Path) -> list[Poisoned]:
    """Every extracted folder of these (verified) conda archives that differs from its archive, removed.
    An archive whose paths.json names a file outside the prefix is refused (BadInputError) before anything is
    linked (rattler would abort the process)."""
    found: list[Poisoned] = []
    memo = ProvedFolders(pkgs_dir)
    for archive in archives:
        if archive.package.manager != "conda" or not archive.verified:
            continue
        folder = extracted_folder(archive, pkgs_dir)
        if memo.holds(folder, _proof(archive)):
            continue  # proved against this very archive, and not a file of it has changed since
        paths = _archive_paths(archive.path)
        _refuse_escaping_paths(archive.package.describe(), paths)
        if not folder.is_dir():
            continue  # rattler extracts it from the verified archive
        problem, signed = _compare(folder, paths)
        if problem is not None:
            found.append(Poisoned(archive.package, folder, *problem))
            shutil.rmtree(folder, ignore_errors=True)
            folder.with_name(folder.name + ".lock").unlink(missing_ok=True)
        elif signed is not None:
            memo.remember(folder, _proof(archive), signed)
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


def refuse_escaping(archives: Sequence[Archive]) -> None:
    """Bad input naming the package when a verified conda archive's paths.json installs anything outside the
    environment (an absolute path makes rattler panic and abort the process; `..` would write outside). An
    archive found clean is remembered by its sha256 (`safe-paths-2/`): the bytes behind a digest never change,
    so the next install of it costs a stat."""
    for archive in archives:
        if archive.package.manager != "conda" or not archive.verified:
            continue
        marker = cache_entry(SAFE, archive.actual) if archive.algorithm == "sha256" else None
        if marker is not None and os.path.exists(marker):
            continue
        paths = _archive_paths(archive.path)
        _refuse_escaping_paths(archive.package.describe(), paths)
        if marker is not None and paths is not None:
            save(marker, b"")


def refuse_escaping_folder(label: str, sha256: str, folder: Path) -> None:
    """`refuse_escaping` for a package the cache already holds extracted (from the archive of `sha256`, as
    rattler recorded): its own info/paths.json is what rattler links from."""
    marker = cache_entry(SAFE, sha256)
    if os.path.exists(marker):
        return
    from rattler.package import PathsJson

    try:
        paths = list(PathsJson.from_package_directory(folder).paths)
    except Exception:  # unreadable: rattler re-extracts it or reports it
        return
    _refuse_escaping_paths(label, paths)
    save(marker, b"")


# Where conda and envguard keep their own records: a package writing there would forge what is installed
# (a conda-meta/numpy-9.9.9-fake_0.json) or which lock the environment follows.
OWNED = (("conda-meta",), ("etc", "envguard"))


def _refuse_escaping_paths(label: str, paths: list[Any] | None) -> None:
    for item in paths or ():
        relative = str(item.relative_path)
        if relative.startswith(("/", "\\")) or ".." in Path(relative).parts or ":" in relative[:3]:
            raise BadInputError(
                f"{label}: its paths.json installs {relative!r}, outside the environment; refusing to "
                "install this package (a broken or hostile archive); nothing was installed"
            )
        parts = Path(relative).parts
        if any(parts[: len(owned)] == owned for owned in OWNED):
            raise BadInputError(
                f"{label}: its paths.json installs {relative!r}, where conda and envguard keep their own "
                "records; refusing to install this package (a broken or hostile archive); nothing was "
                "installed"
            )


def _compare(folder: Path, paths: list[Any] | None) -> tuple[tuple[str, str] | None, Signed | None]:
    """The first difference between `folder` and the archive's entries, and (when there is none) the stat
    signature of every file that was proved, taken before it was hashed."""
    from rattler.package import PathsJson

    if paths is None:  # an archive rattler cannot read: let the link step report it
        return None, None
    try:  # rattler links what the folder's own paths.json lists: it must list exactly the archive's files
        index = folder / "info" / "paths.json"
        signed = [signature("info/paths.json", index)]
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
        signed.append(signature(relative, path))
        size = entry.size_in_bytes
        if size is not None and signed[-1][1] != size:
            return (relative, f"has {signed[-1][1]} bytes instead of {size}"), None
        digest = entry.sha256
        if digest is not None and file_digest(path) != bytes(digest).hex():
            return (relative, "has different content (sha256)"), None
    return None, signed


def _proof(archive: Archive) -> Proof:
    """What the memo is valid for: this archive's digest, as proved against the lock this run."""
    return [archive.algorithm, archive.actual, archive.path.name]
