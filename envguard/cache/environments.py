"""The whole-environment cache: a conda prefix's Environment as the reader built it, served again while the
prefix's stat fingerprint (envguard.cache.statsig) is unchanged.

The record cache (envguard.cache.records) spares parsing unchanged records, but a read still stats and
decodes every record's entry and builds every Package; for a 3,000-package prefix that is most of `diff`,
`export` and a full `check`. This cache keeps the finished Environment, one file per prefix, and serves it
when the fingerprint — every conda-meta entry, every dist-info and the files the pip reader opens, by size,
mtime, ctime and inode — is identical to the one taken before the stored read began.

Safety: the entry is stored under the fingerprint taken BEFORE the read, so a change racing the read leaves
an entry whose fingerprint the prefix no longer has (ctime cannot be set back); nothing is stored when a file
in it changed within the record cache's `FRESH_NS` (a coarse file-system clock can give two edits the same
stamp). The entry names envguard's version, the prefix (as given and resolved), the platform and the
virtual packages the reader was handed (each set of them has its own entry), and carries a CRC of its
payload; anything else, unreadable or malformed, is a miss. No fingerprint (a filesystem without inodes or
ctimes) means no cache. At most `MAX_ENTRIES` entries are kept (the least recently written go first), so the
temporary prefixes verify builds cannot pile up. `ENVGUARD_RECORD_CACHE=0` turns it off with the record
cache.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envguard.cache import enabled, entry, records, rows, save
from envguard.cache.statsig import Stats, newest, stat_fingerprint, stats_of
from envguard.channels import scrub
from envguard.cuda import CudaSummary
from envguard.model import Environment, RequestedSpec, VirtualPackage
from envguard.version import __version__

FORMAT = 2  # 2: names, versions and URLs with control characters are refused where read
MAX_ENTRIES = 16


def cached_read(
    prefix: Path,
    virtual: tuple[VirtualPackage, ...],
    platform: str,
    read: Callable[[Stats | None], Environment],
    fingerprint: str | None = None,
) -> Environment:
    """`read(stats)`'s Environment for PREFIX, from the cache while its fingerprint is unchanged.
    `fingerprint`: one the caller took before it began (envguard check takes it once for its own cache); on a
    miss, the stat results it was built from go to `read`, which then stats nothing twice."""
    if not enabled():
        return read(None)
    if fingerprint is None:
        fingerprint = stat_fingerprint(prefix)
    if not fingerprint:
        try:
            return read(None)
        finally:
            rows.forget()  # no entry to write: the record cache's texts are not wanted
    where = _entry_path(prefix, virtual)
    header = _header(prefix, virtual, platform)
    env = _load(where, header, fingerprint, prefix)
    if env is not None:
        return env
    env = read(stats_of(fingerprint))
    try:
        if time.time_ns() - newest(fingerprint) > records.FRESH_NS and env.fingerprints is None:
            _store(where, header, fingerprint, env)  # under the fingerprint taken BEFORE the read
    finally:
        rows.forget()  # the record cache's texts of this read: used here or not at all
    return env


def _entry_path(prefix: Path, virtual: tuple[VirtualPackage, ...] = ()) -> Path:
    """One entry per prefix and set of virtual packages: export reads without them, diff and check with the
    machine's, and neither evicts the other's."""
    real = os.path.realpath(prefix).encode("utf-8", "surrogateescape")
    machine = repr([(v.name, v.version, v.build) for v in virtual]).encode("utf-8", "surrogateescape")
    return Path(entry("envs", f"{zlib.crc32(real):08x}-{zlib.crc32(machine):08x}.json"))


def _header(prefix: Path, virtual: tuple[VirtualPackage, ...], platform: str) -> list[Any]:
    return [
        FORMAT,
        __version__,
        str(prefix),
        os.path.realpath(prefix),
        platform,
        [[v.name, v.version, v.build] for v in virtual],
    ]


def _load(where: Path, header: list[Any], fingerprint: str, prefix: Path) -> Environment | None:
    """The entry: one JSON line [header, fingerprint, CRC of the payload], then the payload (JSON)."""
    try:
        with open(where, "rb") as handle:
            head = json.loads(handle.readline())
            if head[0] != header or head[1] != fingerprint:
                return None  # the prefix changed: its payload is not even read
            payload = handle.read()
        crc = zlib.crc32(payload)
        if crc != head[2]:
            return None
        return _decoded(payload, crc, prefix)
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None  # unreadable or not what _store writes: read the prefix instead


def _store(where: Path, header: list[Any], fingerprint: str, env: Environment) -> None:
    """Write the entry (envguard.cache.save) and drop the oldest beyond MAX_ENTRIES."""
    document = _encode(env)
    text = scrub(document)  # no credentials on disk, as everywhere
    payload = text.encode("utf-8", "surrogateescape")
    head = json.dumps([header, fingerprint, zlib.crc32(payload)]).encode("utf-8", "surrogateescape")
    save(where, head + b"\n" + payload)
    try:
        _prune(where.parent)
    except OSError:
        return


def _prune(folder: Path) -> None:
    entries = []
    with os.scandir(folder) as found:
        for item in found:
            if item.name.endswith(".json"):
                try:
                    entries.append((item.stat().st_mtime_ns, item.path))
                except OSError:
                    continue
    for _mtime, path in sorted(entries, reverse=True)[MAX_ENTRIES:]:
        try:
            os.unlink(path)
        except OSError:
            continue


# This process's last decoded payload: a second prefix with the very same content (a clone, `diff A A`'s
# twin) shares its frozen packages instead of decoding them again, and comparing them is a matter of identity.
_LAST: dict[int, tuple[bytes, Environment]] = {}


def _decoded(payload: bytes, crc: int, prefix: Path) -> Environment:
    seen = _LAST.get(crc)
    if seen is not None and seen[0] == payload:
        return dataclasses.replace(seen[1], source=str(prefix), name=prefix.name, prefix=str(prefix))
    env = _decode(json.loads(payload), prefix)
    _LAST.clear()
    _LAST[crc] = (payload, env)
    return env


# --- the payload: positional rows (a fraction of model.from_dict's cost; the types are the reader's own)


def _encode(env: Environment) -> str:
    """The payload's JSON text; the package rows' texts come from the record cache's write of this run where
    it encoded them (envguard.cache.rows), else are encoded here."""
    fields = [
        env.kind,
        env.platform,
        env.python,
        env.python_implementation,
        list(env.channels),
        None,  # the package rows, spliced in as text
        [[r.manager, r.spec] for r in env.requested],
        list(env.pip_options),
        list(env.platforms),
        [[v.name, v.version, v.build] for v in env.virtual_packages],
        list(dataclasses.astuple(env.cuda)),
        list(env.warnings),
    ]
    head = json.dumps(fields[:5], separators=(",", ":"))
    tail = json.dumps(fields[6:], separators=(",", ":"))
    return f"{head[:-1]},[{','.join(rows.texts(list(env.packages)))}],{tail[1:]}"


def _decode(data: list[Any], prefix: Path) -> Environment:
    kind, platform, python, implementation, channels, found, requested, pip_options = data[:8]
    platforms, virtual, cuda, warnings = data[8:]
    packages = tuple(map(rows.package, found))
    return Environment(
        kind=kind,
        source=str(prefix),
        name=prefix.name,
        prefix=str(prefix),
        platform=platform,
        python=python,
        python_implementation=implementation,
        channels=tuple(channels),
        packages=packages,
        requested=tuple(RequestedSpec(m, s) for m, s in requested),
        pip_options=tuple(pip_options),
        platforms=tuple(platforms),
        virtual_packages=tuple(VirtualPackage(n, v, b) for n, v, b in virtual),
        cuda=CudaSummary(*cuda),
        warnings=tuple(warnings),
    )
