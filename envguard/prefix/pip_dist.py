"""Read pip-installed packages from a prefix's `*.dist-info` folders (skipping those conda installed)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.channels import strip_credentials
from envguard.model import Package, PipOrigin
from envguard.specs import canonical_name
from envguard.textio import read_bytes

CONDA_INSTALLERS = frozenset({"conda", "rattler", "pixi", "mamba", "micromamba"})
_NORMALIZE = re.compile(r"[-_.]+")
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def site_packages_dirs(prefix: Path) -> list[Path]:
    """Every site-packages folder of a prefix (POSIX `lib/pythonX.Y/`, Windows `Lib/`), sorted."""
    found: list[Path] = []
    lib = prefix / "lib"
    try:
        entries = sorted(os.listdir(lib))
    except OSError:
        entries = []
    for entry in entries:
        if entry.startswith("python"):
            candidate = lib / entry / "site-packages"
            if candidate.is_dir():
                found.append(candidate)
    windows = prefix / "Lib" / "site-packages"
    if windows.is_dir():
        found.append(windows)
    return found


def dist_info_dirs(prefix: Path) -> list[Path]:
    """All `*.dist-info` folders of a prefix, sorted."""
    result: list[Path] = []
    for site in site_packages_dirs(prefix):
        try:
            names = os.listdir(site)
        except OSError:
            continue
        result.extend(site / n for n in sorted(names) if n.endswith(".dist-info"))
    return result


def read_pip_packages(prefix: Path) -> tuple[list[Package], list[str]]:
    """pip packages and warnings; dist-infos whose INSTALLER is conda (or rattler/pixi) are conda's own."""
    packages: list[Package] = []
    warnings: list[str] = []
    for data in map(_read_dist, dist_info_dirs(prefix)):
        warnings.extend(data["warnings"])
        if data["skip"]:
            continue
        origin = data["origin"]
        packages.append(
            Package(
                manager="pip",
                name=data["name"],
                version=data["version"],
                sha256=data["sha256"],
                installer=data["installer"],
                origin=PipOrigin(**origin) if origin is not None else None,
            )
        )
    return packages, warnings


READ_FILES = ("INSTALLER", "METADATA", "direct_url.json")  # every file _read_dist opens


def _read_dist(folder: Path) -> dict[str, Any]:
    """What the model keeps of one dist-info."""
    warnings: list[str] = []
    installer = _read(folder / "INSTALLER").strip().lower()
    if installer in CONDA_INSTALLERS:
        return {"skip": True, "warnings": warnings}
    name, version = _name_version(folder)
    if not name or not version:
        warnings.append(f"{folder}: dist-info without Name/Version in METADATA; skipped")
        return {"skip": True, "warnings": warnings}
    origin, sha256 = _origin(folder / "direct_url.json", warnings)
    return {
        "skip": False,
        "warnings": warnings,
        "name": canonical_name(name),
        "version": version,
        "installer": installer or "unknown",
        "sha256": sha256,
        "origin": dataclasses.asdict(origin) if origin is not None else None,
    }


def _read(path: Path) -> str:
    try:
        return read_bytes(path).decode("utf-8", "replace")
    except OSError:
        return ""


def _name_version(folder: Path) -> tuple[str, str]:
    name = version = ""
    try:
        with open(folder / "METADATA", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    break
                if line.startswith("Name:"):
                    name = line[5:].strip()
                elif line.startswith("Version:"):
                    version = line[8:].strip()
                if name and version:
                    break
    except OSError:
        pass
    if not name or not version:
        stem = folder.name[: -len(".dist-info")]
        if "-" in stem:
            guess_name, guess_version = stem.split("-", 1)
            name, version = name or guess_name, version or guess_version
    return name, version


def _origin(path: Path, warnings: list[str]) -> tuple[PipOrigin | None, str]:
    """The PEP 610 origin and, for an archive (a wheel or sdist file), its sha256 as pip recorded it."""
    try:
        data = json.loads(read_bytes(path))
    except FileNotFoundError:
        return None, ""
    except (OSError, ValueError):
        warnings.append(f"{path}: unreadable direct_url.json; origin unknown")
        return None, ""
    if not isinstance(data, dict):
        return None, ""
    origin = _parse_origin(data, path, warnings)
    return origin, (_archive_sha256(data.get("archive_info")) if origin is not None else "")


def _archive_sha256(info: object) -> str:
    """`archive_info.hashes.sha256`, else the older `archive_info.hash` (`sha256=HEX`); '' when absent."""
    if not isinstance(info, dict):
        return ""
    hashes = info.get("hashes")
    digest = hashes.get("sha256") if isinstance(hashes, dict) else None
    if not isinstance(digest, str):
        algorithm, _, value = str(info.get("hash") or "").partition("=")
        digest = value if algorithm == "sha256" else ""
    return digest.lower() if _SHA256.fullmatch(digest) else ""


def _parse_origin(data: dict[str, object], path: Path, warnings: list[str]) -> PipOrigin | None:
    dir_info = data.get("dir_info") or {}
    vcs_info = data.get("vcs_info") or {}
    if (
        not isinstance(dir_info, dict)
        or not isinstance(vcs_info, dict)
        or not isinstance(data.get("url"), str)
    ):
        warnings.append(f"{path}: malformed direct_url.json (PEP 610); origin unknown")
        return None
    return PipOrigin(
        url=strip_credentials(str(data.get("url", ""))),
        editable=bool(dir_info.get("editable", False)),
        vcs=str(vcs_info.get("vcs", "")),
        commit_id=str(vcs_info.get("commit_id", "")),
        requested_revision=str(vcs_info.get("requested_revision", "")),
    )


# --- RECORD: the files pip installed, for `check --files` and for removing a distribution ------------------


@dataclass(frozen=True, slots=True)
class DistFiles:
    """One pip-installed distribution's files as its RECORD lists them (absolute, inside the prefix), its
    dist-info folder, and the RECORD entries that point outside the prefix (never touched)."""

    name: str
    folder: Path
    files: tuple[Path, ...]
    outside: tuple[str, ...] = ()


def distribution_files(prefix: Path, names: Collection[str]) -> list[DistFiles]:
    """The pip-installed (not conda's) distributions of these canonical names, with what their RECORD lists;
    a dist-info without a RECORD has no files listed (the caller says what to do)."""
    wanted = {canonical_name(n) for n in names}
    root = os.path.realpath(prefix)
    found = []
    for folder in dist_info_dirs(prefix):
        if _read(folder / "INSTALLER").strip().lower() in CONDA_INSTALLERS:
            continue
        name = canonical_name(_name_version(folder)[0])
        if name not in wanted:
            continue
        files: list[Path] = []
        outside: list[str] = []
        for row in _record_rows(folder):
            if not row or not row[0]:
                continue
            path = os.path.normpath(os.path.join(folder.parent, row[0]))
            if os.path.commonpath([root, os.path.realpath(os.path.dirname(path))]) != root:
                outside.append(row[0])  # --target elsewhere, --user, a hostile RECORD: not ours to delete
            else:
                files.append(Path(path))
        found.append(DistFiles(name, folder, tuple(files), tuple(outside)))
    return found


# (path relative to the prefix, sha256 hex or None, size or None)
RecordEntry = tuple[str, str | None, int | None]


def record_files(prefix: Path, wanted: set[str] | None = None) -> Iterator[tuple[str, list[RecordEntry]]]:
    """For each pip-installed dist-info (conda's own are in conda-meta): its label `name version (pip)` and
    the files its RECORD lists, relative to the prefix. Compiled `.pyc` files (Python regenerates them),
    entries without a hash or size (RECORD itself) and paths outside the prefix are left out."""
    root = os.path.realpath(prefix)
    for folder in dist_info_dirs(prefix):
        if _read(folder / "INSTALLER").strip().lower() in CONDA_INSTALLERS:
            continue
        name, version = _name_version(folder)
        if wanted is not None and canonical_name(name) not in wanted:
            continue
        site = os.path.relpath(folder.parent, prefix)
        entries = [e for row in _record_rows(folder) if (e := _record_entry(row, site, root)) is not None]
        yield f"{canonical_name(name)} {version} (pip)", entries


def _record_rows(folder: Path) -> list[list[str]]:
    import csv
    import io

    return list(csv.reader(io.StringIO(_read(folder / "RECORD"))))


def _record_entry(row: list[str], site: str, root: str) -> RecordEntry | None:
    if len(row) < 3 or not row[0] or not (row[1] or row[2]) or row[0].endswith(".pyc"):
        return None
    path = row[0]
    path = os.path.relpath(path, root) if os.path.isabs(path) else os.path.normpath(os.path.join(site, path))
    if path.startswith(".."):  # installed outside this prefix (--target elsewhere, --user)
        return None
    algorithm, _, encoded = row[1].partition("=")
    sha256 = None
    if algorithm == "sha256" and encoded:
        import base64

        try:
            sha256 = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).hex()
        except ValueError:
            sha256 = None
    size = int(row[2]) if row[2].isdigit() else None
    return path.replace(os.sep, "/"), sha256, size


# --- WHEEL: the tags of the wheel a distribution was installed from (the lock finds that file by them) ---


def wheel_tags(prefix: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """Each pip-installed (not conda's) distribution's canonical name -> (version, the tags its WHEEL file
    lists: `cp311-cp311-manylinux_2_17_x86_64`, ...); no tags for one built from an sdist on this machine
    (its WHEEL names a wheel no index holds) or without a WHEEL file."""
    found: dict[str, tuple[str, frozenset[str]]] = {}
    for folder in dist_info_dirs(prefix):
        if _read(folder / "INSTALLER").strip().lower() in CONDA_INSTALLERS:
            continue
        name, version = _name_version(folder)
        tags = [
            line[4:].strip().lower()
            for line in _read(folder / "WHEEL").splitlines()
            if line.startswith("Tag:") and line[4:].strip()
        ]
        found[canonical_name(name)] = (version, frozenset(tags))
    return found
