"""The record cache: what the prefix reader decodes of each conda-meta record (its typed `Record`) and of
each dist-info, kept per prefix and keyed by each file's stat signature, so an unchanged record is never
read again.

Pays for: the first `envguard check` after an install or an update (the pre-commit hook's miss), and
`diff`/`export`/`lock` of a prefix whose whole-environment entry is stale. Measured on a 3,000-package prefix
(115 MB of conda-meta; scripts/bench/bench_caches.py, medians of CPU time): a full check after the prefix
changed, 335 ms with this cache, 492 ms with every record decoded again (msgspec skips the file lists, and
still reading 115 MB costs ~170 ms); the records alone, 62 ms from the entry against 168 ms read.

Safety: the signature is the record's size, mtime, ctime, inode and device, taken with `os.stat` (a
symlinked record is signed by its target: re-pointing the link or editing the target changes it) BEFORE the
record is read, so a write racing the read only causes a re-read next time. ctime cannot be set back, so an
in-place edit that restores the size and mtime still misses. A record changed within `FRESH_NS` of being read
is not stored (a coarse file-system clock could give a second edit in the same tick the same signature). The
entry names its prefix, envguard's version and the type it holds; anything unreadable or of another shape in
it is ignored. `ENVGUARD_RECORD_CACHE=0` turns the cache off.
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from envguard.cache import enabled, entry, save
from envguard.version import __version__

FORMAT = 3  # 3: each record as the reader's msgspec Struct
FRESH_NS = 2_000_000_000
Signature = list[int]
T = TypeVar("T")


def signature(st: os.stat_result) -> Signature:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def cached(read: Callable[[str], T], paths: list[str], kind: type[T], prefix: Path) -> list[T]:
    """`[read(path) for path in paths]` (the conda-meta records of PREFIX), each from the stored results while
    its file's stat signature is unchanged; `kind` is what `read` returns (a msgspec-encodable type)."""
    if not enabled():
        return [read(path) for path in paths]
    where = _entry_path(prefix)
    header = [FORMAT, __version__, os.path.realpath(prefix), repr(kind)]
    stored = _load_typed(where, header, kind)
    kept: dict[str, tuple[Signature, T]] = {}
    result: list[T] = []
    changed = len(stored) != len(paths)
    now = time.time_ns()
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            read(path)  # raises the reader's one-line error for this file
            raise
        sign = signature(st)
        name = os.path.basename(path)
        found = stored.get(name)
        if found is not None and found[0] == sign:
            value = found[1]
        else:
            value = read(path)
            changed = True
        if now - max(st.st_mtime_ns, st.st_ctime_ns) > FRESH_NS:
            kept[name] = (sign, value)
        else:
            changed = True  # read again next time, until it has aged
        result.append(value)
    if changed and (kept or stored):  # a just-built prefix (verify's, a test's) leaves no empty entry behind
        save(where, msgspec.json.encode([header, kept]).decode("utf-8", "surrogateescape"))  # text: scrubbed
    return result


def _load_typed(where: Path, header: list[Any], kind: type[T]) -> dict[str, tuple[Signature, T]]:
    """The stored results: name -> (signature, value); empty for an entry of another format, prefix, version
    or type, or one that does not decode as `kind`."""
    try:
        with open(where, "rb") as handle:
            head, stored = msgspec.json.decode(
                handle.read(),
                type=tuple[list[Any], dict[str, tuple[Signature, kind]]],  # type: ignore[valid-type]
            )
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return {}
    return stored if head == header else {}


def _entry_path(prefix: Path) -> Path:
    real = os.path.realpath(prefix)
    return Path(entry("records", f"{zlib.crc32(real.encode('utf-8', 'surrogateescape')):08x}.json"))
