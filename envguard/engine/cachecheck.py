"""The package cache is trusted only as far as the verified archive vouches for it: an extracted folder in
pkgs_dir is compared, file by file, with the archive's own info/paths.json (sha256 and size) before rattler
may link from it. A folder that differs (an edited, added-to or truncated file: a poisoned CI cache) is
removed so rattler re-extracts it from the verified archive, and reported naming the package and the file."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
    for archive in archives:
        if archive.package.manager != "conda" or not archive.verified:
            continue
        _refuse_escaping_paths(archive)
        folder = extracted_folder(archive, pkgs_dir)
        if not folder.is_dir():
            continue  # rattler extracts it from the verified archive
        problem = first_difference(archive.path, folder)
        if problem is not None:
            found.append(Poisoned(archive.package, folder, *problem))
            shutil.rmtree(folder, ignore_errors=True)
            folder.with_name(folder.name + ".lock").unlink(missing_ok=True)
    return found


def _refuse_escaping_paths(archive: Archive) -> None:
    from rattler.package import PathsJson

    try:
        paths = PathsJson.from_package_archive(archive.path).paths
    except Exception:  # unreadable: the record step names it
        return
    for entry in paths:
        relative = str(entry.relative_path)
        if relative.startswith(("/", "\\")) or ".." in Path(relative).parts or ":" in relative[:3]:
            raise BackendError(
                f"{archive.package.describe()}: its paths.json installs {relative!r}, outside the "
                "environment; refusing to install this package (a broken or hostile archive)"
            )


def first_difference(archive: Path, folder: Path) -> tuple[str, str] | None:
    """(file, problem) for the first file of `folder` that differs from `archive`'s paths.json, else None."""
    from rattler.package import PathsJson

    try:
        paths = PathsJson.from_package_archive(archive).paths
    except Exception:  # an archive rattler cannot read: let the link step report it
        return None
    try:  # rattler links what the folder's own paths.json lists: it must list exactly the archive's files
        listed = {str(e.relative_path) for e in PathsJson.from_package_directory(folder).paths}
    except Exception:
        return "info/paths.json", "is unreadable"
    if listed != {str(e.relative_path) for e in paths}:
        return "info/paths.json", "lists other files"
    for entry in paths:
        relative = str(entry.relative_path)
        path = folder / relative
        if not entry.path_type.hardlink:
            continue
        if not path.is_file() or path.is_symlink():
            return relative, "is missing"
        size = entry.size_in_bytes
        if size is not None and path.stat().st_size != size:
            return relative, f"has {path.stat().st_size} bytes instead of {size}"
        digest = entry.sha256
        if digest is not None and file_digest(path) != bytes(digest).hex():
            return relative, "has different content (sha256)"
    return None
