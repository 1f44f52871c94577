"""What is in use: every package an environment's conda-meta records, or a lock given with --keep-locked
names.

Never decided by link counts: a softlinked environment's cache files have one link each, and a package whose
files are hardlinked among themselves has more. A record that cannot be read still protects its package
through its file name (`conda-meta/NAME-VERSION-BUILD.json`); an environment whose conda-meta cannot be listed
makes the usage incomplete, and then no package is removed at all.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from envguard.clean.model import PACKAGE_SUFFIXES, EnvRef, Usage
from envguard.errors import BadInputError, OperationalError
from envguard.formats import detect_kind, pixilock, read_file
from envguard.formats.condalock import read as condalock
from envguard.model import Environment, SourceKind
from envguard.prefix.records import load_record
from envguard.textio import read_bytes


def strip_archive(name: str) -> str:
    """`zlib-1.3.1-h0_1.conda` -> `zlib-1.3.1-h0_1`; other names unchanged."""
    for suffix in PACKAGE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def record_references(record: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(dists, cache folder names) one conda-meta record references: name-version-build, fn, url,
    package_tarball_full_path, extracted_package_dir and link.source."""
    dists: set[str] = set()
    names: set[str] = set()
    if all(isinstance(record.get(k), str) and record.get(k) for k in ("name", "version", "build")):
        dists.add(f"{record['name']}-{record['version']}-{record['build']}")
    for key in ("fn", "url", "package_tarball_full_path"):
        value = record.get(key)
        if isinstance(value, str) and value:
            dists.add(strip_archive(value.rstrip("/").rsplit("/", 1)[-1]))
    link = record.get("link")
    sources = [record.get("extracted_package_dir"), link.get("source") if isinstance(link, dict) else None]
    for value in sources:
        if isinstance(value, str) and value:
            names.add(os.path.basename(value.rstrip("/\\")))
    return dists, names


def environment_references(prefix: Path) -> tuple[set[str], set[str], list[str], bool]:
    """(dists, folder names, problems, complete) for one prefix's conda-meta."""
    meta = os.path.join(prefix, "conda-meta")
    try:
        names = sorted(n for n in os.listdir(meta) if n.endswith(".json"))
    except OSError as exc:
        return set(), set(), [_unknown_usage(prefix, meta, exc)], False
    dists: set[str] = set()
    folders: set[str] = set()
    problems: list[str] = []
    for name in names:
        dists.add(name[: -len(".json")])
        record = _record(os.path.join(meta, name))
        if isinstance(record, str):
            problems.append(f"{record}; its package stays protected by the record's file name")
            continue
        found_dists, found_folders = record_references(record)
        dists |= found_dists
        folders |= found_folders
    return dists, folders, problems, True


def _record(path: str) -> dict[str, Any] | str:
    """A conda-meta record, or the reason it cannot be used (in the prefix reader's words)."""
    try:
        data = json.loads(read_bytes(path))
        if isinstance(data, dict):
            return data
    except (OSError, ValueError):
        pass

    try:
        return load_record(Path(path))
    except (BadInputError, OperationalError) as exc:  # corrupt, or still being written
        return str(exc)


def _unknown_usage(prefix: Path, meta: str, exc: OSError) -> str:
    """Why an environment's usage is unknown, and what the user can do about it."""
    keep = "its usage is unknown, so no package or tarball is removed"
    if not os.path.lexists(prefix):
        return (
            f"{prefix}: environment is registered but its folder is missing (deleted, or on a disk not "
            f"mounted now); {keep}; if it is gone for good, remove its line from ~/.conda/environments.txt"
        )
    if not os.path.lexists(meta):
        return f"{meta}: missing (a half-deleted environment?); {keep}; delete {prefix} or reinstall it"
    return f"{meta}: cannot list ({exc.strerror}); {keep}"


def lock_references(path: Path) -> set[str]:
    """Dists a lock or spec file names (any kind envguard reads: conda-lock.yml, explicit, pixi.lock...), on
    every platform and in every environment the lock holds."""
    kind = detect_kind(path)
    try:
        environments = _lock_environments(path, kind)
    except ImportError as exc:
        raise OperationalError(
            f"{path}: this envguard cannot read {kind} files yet ({exc.name} is missing); "
            "use an explicit spec (`envguard export --explicit`) with --keep-locked"
        ) from exc
    dists: set[str] = set()
    for env in environments:
        for package in env.conda_packages():
            if package.build:
                dists.add(f"{package.name}-{package.version}-{package.build}")
            if package.filename:
                dists.add(strip_archive(package.filename))
    return dists


def _lock_environments(path: Path, kind: SourceKind) -> list[Environment]:
    """conda-lock: all platforms; pixi.lock: every environment (this machine's platform); others: the file."""
    if kind == "conda-lock":
        return list(condalock.read_all(path).values())
    if kind == "pixi-lock":
        import rattler

        found = []
        for name, _env in rattler.LockFile.from_path(path).environments():
            with contextlib.suppress(BadInputError):  # an environment without this machine's platform
                found.append(pixilock.read(path, environment=name))
        return found
    return [read_file(path, kind=kind)]


def analyse(environments: Sequence[EnvRef], locks: Iterable[Path]) -> Usage:
    """Fold every environment's and lock's references into one Usage."""
    dists: set[str] = set()
    folders: set[str] = set()
    problems: list[str] = []
    complete = True
    for env in environments:
        env_dists, env_folders, env_problems, env_complete = environment_references(env.prefix)
        dists |= env_dists
        folders |= env_folders
        problems += env_problems
        complete = complete and env_complete
    lock_paths = [Path(p) for p in locks]
    for lock in lock_paths:
        dists |= lock_references(lock)
    return Usage(
        dists=frozenset(dists),
        dir_names=frozenset(folders),
        environments=tuple(environments),
        locks=tuple(str(p) for p in lock_paths),
        problems=tuple(problems),
        complete=complete,
    )
