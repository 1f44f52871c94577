"""The `envguard check` fast path: confirm an unchanged environment from file metadata alone.

The stat fingerprint (envguard.cache.statsig) covers every file the prefix reader reads; any install,
removal, upgrade, reinstall or edit changes it.

A cached verdict is identified by the check's material (envguard's version, the prefix, the input file paths
and options) and holds the stat signature of the input files (lock, environment.yml) and of the environment at
the last full check that was CLEAN. Only identical material and signatures short-circuit, and only to "clean":
drift is never cached, so the cache can never turn real drift into a pass.

Pays for: the unchanged `envguard check` (the pre-commit hook): on a 3,000-package prefix 68 ms of CPU (1.7x
`python -c pass`) against 284 ms for the full check with every other cache warm (scripts/bench/
bench_caches.py). It keeps the clean verdict as printed, in each style: rendering it on a hit would import
check's renderer and with it the comparison (~80 ms, by Python's import-time profile), more than the
answer costs.

This module is on the fast path: it imports only the standard library's os, stat and zlib (no json,
hashlib, no envguard model, no yaml, rattler, rich, deepdiff or torch).
"""

from __future__ import annotations

import os
import zlib

from envguard.cache import BOOT_ID, DRIVER_VERSION, OVERRIDE_VARS, cache_path, entry, save
from envguard.cache.statsig import stat_fingerprint as stat_fingerprint  # what entries are validated by
from envguard.version import __version__

TYPE_CHECKING = False  # typing's constant (and collections.abc) would cost imports on the fast path
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

FORMAT = 3
MACHINE_FILES = (BOOT_ID, DRIVER_VERSION)


def cache_root() -> str:
    """`<envguard's cache folder>/check`."""
    return os.path.join(cache_path(), "check")


def inputs_signature(paths: Iterable[str | os.PathLike[str]]) -> str:
    """Stat signature of the check's input files (an edit, a replacement or a `git checkout` changes it)."""
    lines = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            return ""  # unreadable input: never a cache hit
        lines.append(f"{os.path.abspath(path)} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}")
    return "\n".join(lines)


def material(
    prefix: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]], options: Mapping[str, str]
) -> str:
    """What the outputs of a check depend on besides file contents: version, prefix, inputs, options,
    machine."""
    parts = [f"envguard {__version__} check-cache {FORMAT}", os.path.realpath(prefix)]
    parts += [os.path.abspath(p) for p in inputs]
    parts += [f"{k}={options[k]}" for k in sorted(options)]
    parts += [f"{k}={os.environ.get(k, '')}" for k in OVERRIDE_VARS]
    for path in MACHINE_FILES:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                parts.append(handle.read().strip())
        except OSError:
            parts.append("-")
    return "\n".join(parts)


def _entry(material_text: str) -> str:
    return entry("check", f"{zlib.crc32(material_text.encode()):08x}.entry")


# An entry is length-prefixed text fields (material, inputs, fingerprint, "clean", then style and output
# pairs): reading it needs no json, whose import (with the re and enum it pulls in) costs ~12 ms where site
# has not loaded them already, more than the rest of the fast path's imports together.
_MAGIC = b"envguard check-cache\n"


def _pack(fields: list[str]) -> bytes:
    parts = [_MAGIC]
    for text in fields:
        data = text.encode("utf-8", "surrogateescape")
        parts += [str(len(data)).encode("ascii"), b"\n", data, b"\n"]
    return b"".join(parts)


def _unpack(blob: bytes) -> list[str] | None:
    """The fields `_pack` wrote, or None for anything else (a damaged or foreign file)."""
    if not blob.startswith(_MAGIC):
        return None
    fields: list[str] = []
    pos = len(_MAGIC)
    while pos < len(blob):
        end = blob.find(b"\n", pos)
        size = blob[pos:end]
        if end < 0 or not size.isdigit() or len(size) > 12:
            return None
        start = end + 1
        stop = start + int(size)
        if blob[stop : stop + 1] != b"\n":
            return None
        fields.append(blob[start:stop].decode("utf-8", "surrogateescape"))
        pos = stop + 1
    return fields


def lookup(material_text: str, inputs: str, fingerprint: str) -> dict[str, object] | None:
    """The stored clean outputs when material, input and environment signatures are all identical, else
    None."""
    if not inputs or not fingerprint:
        return None
    try:
        with open(_entry(material_text), "rb") as handle:
            fields = _unpack(handle.read())
    except OSError:
        return None
    if fields is None or len(fields) < 4 or len(fields) % 2:
        return None
    if fields[:4] != [material_text, inputs, fingerprint, "clean"]:
        return None
    outputs: dict[str, object] = dict(zip(fields[4::2], fields[5::2], strict=True))
    return outputs


def store(
    material_text: str, inputs: str, fingerprint: str, clean: bool, outputs: Mapping[str, object]
) -> None:
    """Remember a full check's verdict; anything but clean removes the entry (drift is never cached)."""
    path = _entry(material_text)
    try:
        if not clean or not inputs or not fingerprint:
            if os.path.exists(path):
                os.unlink(path)
            return
        from envguard.channels import scrub  # its re: a save, never on the fast path's lookup

        fields = [material_text, inputs, fingerprint, "clean"]
        for style, text in outputs.items():
            fields += [style, str(text)]
        # no credentials on disk (a field scrubbed of one no longer matches: a miss, never a wrong hit)
        save(path, _pack([scrub(f) for f in fields]))
    except Exception:  # a cache that cannot be written only costs speed next time
        return
