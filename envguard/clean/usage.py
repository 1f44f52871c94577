"""What is in use: every package an environment's conda-meta records, or a lock given with --keep-locked names.

Never decided by link counts: a softlinked environment's cache files have one link each, and a package whose
files are hardlinked among themselves has more. A record that cannot be read still protects its package through
its file name (`conda-meta/NAME-VERSION-BUILD.json`); an environment whose conda-meta cannot be listed makes the
usage incomplete, and then no package is removed at all.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from envguard.clean.model import PACKAGE_SUFFIXES, EnvRef, Usage
from envguard.errors import OperationalError


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


_RECORD_KEYS = (
    "fn",
    "url",
    "package_tarball_full_path",
    "extracted_package_dir",
    "source",
    "name",
    "version",
    "build",
)
_SPACE = b" \t\r\n"


def string_values(raw: bytes, key: str) -> list[str]:
    """Every string value of `"key": "..."` anywhere in a JSON text, found with bytes.find (no full parse)."""
    needle = b'"' + key.encode() + b'"'
    values: list[str] = []
    start = 0
    while (at := raw.find(needle, start)) != -1:
        start = at + len(needle)
        colon = _skip_space(raw, start)
        if colon >= len(raw) or raw[colon] != 0x3A:  # ':' - the needle was a value or part of one, not a key
            continue
        opening = _skip_space(raw, colon + 1)
        if opening >= len(raw) or raw[opening] != 0x22:  # '"' - not a string value
            continue
        closing = _closing_quote(raw, opening + 1)
        if closing == -1:
            break
        with contextlib.suppress(ValueError):
            values.append(json.loads(raw[opening : closing + 1]))
        start = closing + 1
    return values


def _skip_space(raw: bytes, at: int) -> int:
    while at < len(raw) and raw[at] in _SPACE:
        at += 1
    return at


def _closing_quote(raw: bytes, at: int) -> int:
    while (at := raw.find(b'"', at)) != -1:
        backslashes = 0
        while raw[at - 1 - backslashes] == 0x5C:
            backslashes += 1
        if backslashes % 2 == 0:
            return at
        at += 1
    return -1


def raw_references(raw: bytes) -> tuple[set[str], set[str]]:
    """record_references over a record's bytes without parsing it: every string value of the keys that matter, at
    any depth. Finding more than the top-level keys only protects more, never less."""
    found = {key: string_values(raw, key) for key in _RECORD_KEYS}
    dists = {strip_archive(v.rstrip("/").rsplit("/", 1)[-1]) for k in ("fn", "url", "package_tarball_full_path")
             for v in found[k] if v}  # fmt: skip
    names = {
        os.path.basename(v.rstrip("/\\")) for k in ("extracted_package_dir", "source") for v in found[k] if v
    }
    if all(0 < len(found[k]) <= 3 for k in ("name", "version", "build")):
        dists |= {f"{n}-{v}-{b}" for n in found["name"] for v in found["version"] for b in found["build"]}
    return dists, names


def environment_references(prefix: Path) -> tuple[set[str], set[str], list[str], bool]:
    """(dists, folder names, problems, complete) for one prefix's conda-meta. Records are scanned, not parsed:
    real ones reach megabytes (`files`, `paths_data`) and only a few keys matter here."""
    meta = prefix / "conda-meta"
    try:
        names = sorted(n for n in os.listdir(meta) if n.endswith(".json"))
    except OSError as exc:
        problem = f"{meta}: cannot list ({exc.strerror}); no package is removed while its use is unknown"
        return set(), set(), [problem], False
    dists: set[str] = set()
    folders: set[str] = set()
    problems: list[str] = []
    for name in names:
        dists.add(name[: -len(".json")])
        protected = "its package stays protected by the record's file name"
        try:
            with open(meta / name, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            problems.append(f"{meta / name}: cannot read ({exc.strerror}); {protected}")
            continue
        stripped = raw.strip()
        if not (stripped.startswith(b"{") and stripped.endswith(b"}")):
            problems.append(f"{meta / name}: not a JSON object (truncated?); {protected}")
        found_dists, found_folders = raw_references(raw)
        dists |= found_dists
        folders |= found_folders
    return dists, folders, problems, True


def lock_references(path: Path) -> set[str]:
    """Dists a lock or spec file names (any kind envguard reads: conda-lock.yml, explicit, pixi.lock...)."""
    from envguard.sources import detect_kind, read_file

    kind = detect_kind(path)
    try:
        env = read_file(path, kind=kind)
    except ImportError as exc:
        raise OperationalError(f"{path}: this envguard cannot read {kind} files yet ({exc.name} is missing); "
                               "use an explicit spec (`envguard export --explicit`) with --keep-locked") from exc  # fmt: skip
    dists: set[str] = set()
    for package in env.conda_packages():
        if package.build:
            dists.add(f"{package.name}-{package.version}-{package.build}")
        if package.filename:
            dists.add(strip_archive(package.filename))
    return dists


def analyse(environments: Sequence[EnvRef], locks: Iterable[Path]) -> Usage:
    """Fold every environment's and lock's references into one Usage."""
    dists: set[str] = set()
    folders: set[str] = set()
    users: dict[str, list[str]] = {}
    problems: list[str] = []
    complete = True
    for env in environments:
        env_dists, env_folders, env_problems, env_complete = environment_references(env.prefix)
        dists |= env_dists
        folders |= env_folders
        problems += env_problems
        complete = complete and env_complete
        for dist in env_dists | env_folders:
            users.setdefault(dist, []).append(str(env.prefix))
    lock_paths = [Path(p) for p in locks]
    for lock in lock_paths:
        lock_dists = lock_references(lock)
        dists |= lock_dists
        for dist in lock_dists:
            users.setdefault(dist, []).append(str(lock))
    return Usage(
        dists=frozenset(dists),
        dir_names=frozenset(folders),
        users={k: tuple(v) for k, v in users.items()},
        environments=tuple(environments),
        locks=tuple(str(p) for p in lock_paths),
        problems=tuple(problems),
        complete=complete,
    )
