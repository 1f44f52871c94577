"""The record cache: what envguard's model takes from each conda-meta record (its Package, as a row of
envguard.cache.rows, and the specs it says were requested), kept per prefix and keyed by each record's stat
signature, so an unchanged record is never parsed again.

A real record is mostly `files` and `paths_data` (over 90% of its bytes; a pytorch record lists 15,000
files), and envguard reads about a dozen other fields. Snapshot, check, lock, export and diff read a prefix
through `read_packages`; file integrity and clean read whole records (`records.iter_records`) when they need
the file lists. The rows are encoded once per run and shared with the whole-environment entry written after
(envguard.cache.rows); the entry is typed row by row when read back (it has no checksum).

Safety: the signature is the record's size, mtime, ctime, inode and device, taken with `os.stat` (a
symlinked record is signed by its target: re-pointing the link or editing the target changes it) BEFORE the
record is read, so a write racing the read only causes a re-parse next time. ctime cannot be set back, so an
in-place edit that restores the size and mtime still misses. A record changed within `FRESH_NS` of being read
is not stored (a coarse file-system clock could give a second edit in the same tick the same signature). The
cache entry names its prefix and envguard's version; anything unreadable or unexpected in it is ignored.
`ENVGUARD_RECORD_CACHE=0` turns the cache off (every record parsed whole, as before it existed).
"""

from __future__ import annotations

import json
import os
import time
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from envguard.cache import enabled, entry, rows, save
from envguard.cache.statsig import Stats
from envguard.errors import BadInputError
from envguard.model import Package
from envguard.version import __version__

FORMAT = 2  # 2: each record as its Package's row (envguard.cache.rows) and requested specs, not its fields
FRESH_NS = 2_000_000_000
Signature = list[int]
Reader = Callable[[Path], Any]
Converted = tuple[Package, list[str]]  # a record's Package and the specs it says were requested
LoadRecord = Callable[[str], dict[str, Any]]
EveryRecord = Callable[[Path], Iterable[tuple[Path, dict[str, Any]]]]
Convert = Callable[[dict[str, Any]], Converted]


def signature(st: os.stat_result) -> Signature:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def read_packages(
    prefix: Path,
    load_record: LoadRecord,
    iter_records: EveryRecord,
    convert: Convert,
    stats: Stats | None = None,
) -> list[Converted]:
    """(Package, requested specs) for each `conda-meta/*.json` in name order, parsing only new or changed
    records with `load_record(path)` and `convert` (or every record with `iter_records(prefix)` when the cache
    is off: the prefix reader's own functions). `stats`: the stat results of a fingerprint walk taken before
    (envguard.cache.statsig), used instead of statting each record again. The rows this writes are remembered
    (envguard.cache.rows) for the whole-environment entry written next."""
    if not enabled():
        return [convert(record) for _path, record in iter_records(prefix)]
    meta = prefix / "conda-meta"
    folder = os.path.join(str(meta), "")  # a Path's text never ends in a separator: this adds one
    try:
        names = sorted(n for n in os.listdir(meta) if n.endswith(".json"))
    except OSError as exc:
        raise BadInputError(
            f"{meta}: cannot list ({exc.strerror}); is {prefix} a conda environment?"
        ) from exc
    where = _entry_path(prefix)
    stored = _load_packages(where, prefix)
    kept: list[tuple[str, Signature, Package, list[str]]] = []
    result: list[Converted] = []
    changed = len(stored) != len(names)
    now = time.time_ns()
    for name in names:
        path = folder + name  # os.path.join's text; a plain concatenation (a Path per record costs more)
        st = stats.get(path) if stats is not None else None
        if st is None:
            try:
                st = os.stat(path)
            except OSError:
                load_record(path)  # raises the reader's one-line error for this record
                raise
        sign = signature(st)
        entry = stored.get(name)
        if entry is not None and entry[0] == sign:
            converted: Converted = (entry[1], entry[2])
        else:
            converted = convert(load_record(path))
            changed = True
        if now - max(st.st_mtime_ns, st.st_ctime_ns) > FRESH_NS:
            kept.append((name, sign, *converted))
        else:
            changed = True  # parsed again next time, until it has aged
        result.append(converted)
    if changed and (kept or stored):  # a just-built prefix (verify's, a test's) leaves no empty entry behind
        _store_packages(where, prefix, kept)
    return result


def _entry_path(prefix: Path, kind: str = "records") -> Path:
    real = os.path.realpath(prefix)
    return Path(entry(kind, f"{zlib.crc32(real.encode('utf-8', 'surrogateescape')):08x}.json"))


def read_dists(
    prefix: Path,
    folders: list[Path],
    files: tuple[str, ...],
    read: Reader,
    valid: Callable[[Any], bool],
    stats: Stats | None = None,
) -> list[Any]:
    """`read(folder)` for each dist-info folder, from the cache where the folder (its own stat: a file added,
    removed or renamed in it changes its mtime and ctime) and each of `files` in it (an in-place edit) are
    unchanged. `read` returns JSON-able data (what the pip reader keeps: name, version, installer, origin,
    warnings); the same freshness rule as records applies. Cached data that `valid` rejects is read again."""
    if not enabled():
        return [read(folder) for folder in folders]
    where = _entry_path(prefix, "dists")
    stored = _load(where, prefix)
    kept: dict[str, list[Any]] = {}
    result: list[Any] = []
    changed = len(stored) != len(folders)
    now = time.time_ns()
    for folder in folders:
        key = str(folder)
        sign, newest = _dist_signature(key, files, stats)
        entry = stored.get(key)
        if entry is not None and entry[0] == sign and valid(entry[1]):
            data = entry[1]
        else:
            data = read(folder)
            changed = True
        if sign and now - newest > FRESH_NS:
            kept[key] = [sign, data]
        else:
            changed = True
        result.append(data)
    if changed and (kept or stored):
        _store(where, prefix, kept)
    return result


def _dist_signature(folder: str, files: tuple[str, ...], stats: Stats | None) -> tuple[Signature, int]:
    """The folder's and its files' signatures (0s for a missing file), and the newest mtime/ctime among
    them; an unreadable folder has no signature (never served from the cache). `stats`: a fingerprint
    walk's results, where it has them."""
    try:
        st = _stat(folder, stats)
    except OSError:
        return [], 0
    if st is None:
        return [], 0
    sign = signature(st)
    newest = max(st.st_mtime_ns, st.st_ctime_ns)
    for name in files:
        try:
            inner = _stat(os.path.join(folder, name), stats)
        except FileNotFoundError:
            inner = None
        except OSError:
            return [], 0
        if inner is None:
            sign += [0, 0, 0, 0, 0]
            continue
        sign += signature(inner)
        newest = max(newest, inner.st_mtime_ns, inner.st_ctime_ns)
    return sign, newest


def _stat(path: str, stats: Stats | None) -> os.stat_result | None:
    """os.stat(path) (None: no such file), from the walk's results where it has this path."""
    if stats is not None and path in stats:
        return stats[path]
    return os.stat(path)


def _header(prefix: Path) -> list[object]:
    return [FORMAT, __version__, os.path.realpath(prefix)]


def _load(where: Path, prefix: Path) -> dict[str, list[Any]]:
    try:
        with open(where, "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("header") != _header(prefix):
        return {}
    records = data.get("records")
    if not isinstance(records, dict):
        return {}
    return {
        name: entry
        for name, entry in records.items()
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict)
    }


def _load_packages(where: Path, prefix: Path) -> dict[str, tuple[Signature, Package, list[str]]]:
    """A prefix's stored records: name -> (signature, Package, requested specs); an
    entry of another format, prefix or version, or with any row or field of the wrong shape, is empty."""
    try:
        with open(where, "rb") as handle:
            data = json.loads(handle.read())
        if data.__class__ is not dict or data.get("header") != _header(prefix):
            return {}
        names, signs, specs, values = data["names"], data["signs"], data["specs"], data["rows"]
        if not (names.__class__ is signs.__class__ is specs.__class__ is values.__class__ is list):
            return {}
        if not len(names) == len(signs) == len(specs) == len(values):
            return {}
        stored = {}
        for name, sign, wanted, found in zip(names, signs, specs, values, strict=True):
            if wanted.__class__ is not list or any(s.__class__ is not str for s in wanted):
                return {}
            stored[name] = (sign, rows.checked_package(found), wanted)
        return stored
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def _store_packages(where: Path, prefix: Path, kept: list[tuple[str, Signature, Package, list[str]]]) -> None:
    """Write the entry: the rows as one JSON list of texts, each encoded once and remembered for the
    whole-environment entry written next (envguard.cache.rows)."""
    packages = [k[2] for k in kept]
    texts = rows.texts(packages)
    rows.remember(packages, texts)
    head = json.dumps(
        {
            "header": _header(prefix),
            "names": [k[0] for k in kept],
            "signs": [k[1] for k in kept],
            "specs": [k[3] for k in kept],
        },
        check_circular=False,
    )
    save(where, head[:-1] + ', "rows": [' + ",".join(texts) + "]}")


def _store(where: Path, prefix: Path, records: dict[str, list[Any]]) -> None:
    """Write the cache entry (envguard.cache.save: atomic, private, credentials scrubbed)."""
    save(where, json.dumps({"header": _header(prefix), "records": records}, check_circular=False))
