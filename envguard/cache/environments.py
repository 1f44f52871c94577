"""The whole-environment cache: a conda prefix's Environment as the reader built it, served again while the
prefix's stat fingerprint (envguard.cache.statsig) is unchanged.

Pays for: `envguard check` when the lock changed but the environment did not (a pre-commit hook after a
`git checkout` or a lock edit: check's own answer is keyed by the lock and misses), and `diff`/`export`/
`lock` of an unchanged prefix. Measured on a 3,000-package prefix (scripts/bench/bench_caches.py, medians of
CPU time): the prefix served in 39 ms (the fingerprint walk, 34 ms of it, and one msgspec decode) against
109 ms through the record cache; a check after the lock's stat changed, 284 ms, against 335 ms when the
environment is read through the record cache.

Safety: the entry is stored under the fingerprint taken BEFORE the read, so a change racing the read leaves
an entry whose fingerprint the prefix no longer has (ctime cannot be set back); nothing is stored when a file
in it changed within the record cache's `FRESH_NS` (a coarse file-system clock can give two edits the same
stamp). The entry names envguard's version, the prefix (as given and resolved), the platform and the
virtual packages the reader was handed (each set of them has its own entry); anything else, unreadable or
malformed, is a miss. No fingerprint (a filesystem without inodes or ctimes) means no cache. At most
`MAX_ENTRIES` entries are kept (the least recently written go first), so the temporary prefixes verify builds
cannot pile up. `ENVGUARD_RECORD_CACHE=0` turns it off with the record cache.
"""

from __future__ import annotations

import dataclasses
import os
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from envguard.cache import enabled, entry, records, save
from envguard.cache.statsig import newest, stat_fingerprint
from envguard.channels import scrub
from envguard.model import Environment, VirtualPackage
from envguard.version import __version__

FORMAT = 3  # 3: the Environment as msgspec encodes it
MAX_ENTRIES = 16


def cached(
    read: Callable[[], Environment], prefix: Path, virtual: tuple[VirtualPackage, ...], platform: str
) -> Environment:
    """`read()`'s Environment for PREFIX (read with these virtual packages for this platform), from the
    cache while the prefix's stat fingerprint is unchanged."""
    if not enabled():
        return read()
    fingerprint = stat_fingerprint(prefix)
    if not fingerprint:
        return read()
    where = _entry_path(prefix, virtual)
    header = [FORMAT, __version__, str(prefix), os.path.realpath(prefix), platform, _machine(virtual)]
    env = _load(where, header, fingerprint)
    if env is not None:
        return dataclasses.replace(env, source=str(prefix), name=prefix.name, prefix=str(prefix))
    env = read()
    if time.time_ns() - newest(fingerprint) > records.FRESH_NS and env.fingerprints is None:
        _store(where, header, fingerprint, env)  # under the fingerprint taken BEFORE the read
    return env


def _machine(virtual: tuple[VirtualPackage, ...]) -> list[list[str]]:
    return [[v.name, v.version, v.build] for v in virtual]


def _entry_path(prefix: Path, virtual: tuple[VirtualPackage, ...] = ()) -> Path:
    """One entry per prefix and set of virtual packages: export reads without them, diff and check with the
    machine's, and neither evicts the other's."""
    real = os.path.realpath(prefix).encode("utf-8", "surrogateescape")
    machine = repr([tuple(v) for v in _machine(virtual)]).encode("utf-8", "surrogateescape")
    return Path(entry("envs", f"{zlib.crc32(real):08x}-{zlib.crc32(machine):08x}.json"))


_DECODER = msgspec.json.Decoder(Environment)


def _load(where: Path, header: list[Any], fingerprint: str) -> Environment | None:
    """The entry: one JSON line [header, fingerprint, CRC of the payload], then the Environment (JSON)."""
    try:
        with open(where, "rb") as handle:
            head = msgspec.json.decode(handle.readline(), type=tuple[list[Any], str, int])
            if head[0] != header or head[1] != fingerprint:
                return None  # the prefix changed: its payload is not even read
            payload = handle.read()
        if zlib.crc32(payload) != head[2]:
            return None
        return _DECODER.decode(payload)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None  # unreadable or not what _store writes: read the prefix instead


def _store(where: Path, header: list[Any], fingerprint: str, env: Environment) -> None:
    """Write the entry (envguard.cache.save) and drop the oldest beyond MAX_ENTRIES."""
    payload = scrub(msgspec.json.encode(env).decode("utf-8", "surrogateescape"))  # no credentials on disk
    data = payload.encode("utf-8", "surrogateescape")
    head = msgspec.json.encode([header, fingerprint, zlib.crc32(data)])
    save(where, head + b"\n" + data)
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
