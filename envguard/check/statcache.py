"""The `envguard check` fast path: confirm an unchanged environment from file metadata alone.

The stat fingerprint covers `conda-meta/` (every record's name, size, mtime, ctime, inode), a venv's
`pyvenv.cfg` and the interpreter it names (`python -m venv --upgrade` changes them) and, in each
site-packages folder, every `*.dist-info`/`*.egg-info` folder (its own mtime and ctime change when a file in
it is added, removed or renamed) with the files envguard reads in it (METADATA, INSTALLER, direct_url.json),
plus `*.pth` and `*.egg-link` files. Symlinks are followed (the target's metadata counts, and the link's
own). Any install, removal, upgrade, reinstall or edit of those changes it (ctime cannot be set back by a
user). Where the filesystem does not report a field the fingerprint relies on (an inode or ctime of 0), there
is no fingerprint and the check runs in full.

A cached verdict is identified by the check's material (envguard's version, the prefix, the input file paths
and options) and holds the stat signature of the input files (lock, environment.yml) and of the environment at
the last full check that was CLEAN. Only identical material and signatures short-circuit, and only to "clean":
drift is never cached, so the cache can never turn real drift into a pass.

This module is on the fast path: it imports only the standard library's os, json, stat and zlib (no
hashlib, no envguard model, no yaml, rattler, rich, deepdiff or torch).
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from collections.abc import Iterable, Mapping

from envguard import __version__
from envguard.cache import OVERRIDE_VARS, cache_path

FORMAT = 2
_PIP_SUFFIXES = (".dist-info", ".egg-info", ".pth", ".egg-link")
# What envguard.prefix.pip_dist reads inside a dist-info (PKG-INFO: an egg-info's METADATA).
_READ_FILES = ("METADATA", "PKG-INFO", "INSTALLER", "direct_url.json")
MACHINE_FILES = ("/proc/sys/kernel/random/boot_id", "/proc/driver/nvidia/version")


def cache_root() -> str:
    """`<envguard's cache folder>/check`."""
    return os.path.join(cache_path(), "check")


def stat_fingerprint(prefix: str | os.PathLike[str]) -> str:
    """The stat metadata of conda-meta/ and of the pip metadata in each site-packages folder, as text."""
    root = os.fspath(prefix)
    lines: list[str] = []
    _scan(os.path.join(root, "conda-meta"), lines, descend=False)
    _interpreter(root, lines)
    for site in _site_packages(root):
        lines.append(f"site {site}")
        _scan(site, lines, descend=True)
    if any(UNRELIABLE in line for line in lines):
        return ""  # no trustworthy fingerprint: never a cache hit
    return "\n".join(lines)


UNRELIABLE = "unreliable-stat"


def _interpreter(root: str, lines: list[str]) -> None:
    """pyvenv.cfg, the interpreter its `home`/`executable` names and the prefix's own bin/python."""
    cfg = os.path.join(root, "pyvenv.cfg")
    lines.append(_path_line("pyvenv.cfg", cfg))
    try:
        with open(cfg, "rb") as handle:  # a venv's pyvenv.cfg is a few hundred bytes
            text = handle.read(65536).decode("utf-8", "replace")
    except OSError:
        text = ""
    for raw in text.splitlines():
        key, _, value = raw.partition("=")
        key, value = key.strip(), value.strip()
        if key == "executable" and value:
            lines.append(_path_line("executable", value))
        elif key == "home" and value:
            for name in ("python3", "python"):
                lines.append(_path_line(f"home {name}", os.path.join(value, name)))
    for name in ("bin/python", "bin/python3", "python.exe"):
        lines.append(_path_line(name, os.path.join(root, name)))


def _scan(folder: str, lines: list[str], *, descend: bool) -> None:
    try:
        with os.scandir(folder) as entries:
            items = sorted(entries, key=lambda e: e.name)
    except OSError:
        lines.append(f"missing {folder}")
        return
    for entry in items:
        if descend and not entry.name.endswith(_PIP_SUFFIXES):
            continue
        lines.append(_stat_line(entry.name, entry))
        if descend and _is_dir(entry):
            # The folder's own mtime/ctime (above) changes whenever a file in it is added, removed or renamed;
            # an in-place edit changes only that file, so the files the pip reader reads are signed too.
            lines.extend(_path_line(f"  {name}", os.path.join(entry.path, name)) for name in _READ_FILES)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)  # a symlinked dist-info folder is scanned too
    except OSError:
        return False


def _stat_line(name: str, entry: os.DirEntry[str]) -> str:
    """Name and stat fields; for a symlink, the link's and its target's (an edit behind the link counts)."""
    try:
        own = entry.stat(follow_symlinks=False)
    except OSError:
        return f"{name} gone"
    line = f"{name} {_fields(own)}"
    if entry.is_symlink():
        try:
            line += f" -> {_fields(os.stat(entry.path))}"
        except OSError:
            line += " -> dangling"
    return line


def _path_line(name: str, path: str) -> str:
    try:
        own = os.lstat(path)
    except OSError:
        return f"{name} absent"
    line = f"{name} {_fields(own)}"
    if stat.S_ISLNK(own.st_mode):
        try:
            line += f" -> {os.path.realpath(path)} {_fields(os.stat(path))}"
        except OSError:
            line += " -> dangling"
    return line


def _fields(st: os.stat_result) -> str:
    if not st.st_ino or not st.st_ctime_ns:
        return UNRELIABLE
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}"


def _site_packages(root: str) -> list[str]:
    lib = os.path.join(root, "lib")
    try:
        names = sorted(n for n in os.listdir(lib) if n.startswith("python"))
    except OSError:
        names = []
    found = [os.path.join(lib, n, "site-packages") for n in names]
    found.append(os.path.join(root, "Lib", "site-packages"))
    return [f for f in found if os.path.isdir(f)]


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
    return os.path.join(cache_root(), f"{zlib.crc32(material_text.encode()):08x}.json")


def lookup(material_text: str, inputs: str, fingerprint: str) -> dict[str, object] | None:
    """The stored clean outputs when material, input and environment signatures are all identical, else
    None."""
    if not inputs or not fingerprint:
        return None
    try:
        with open(_entry(material_text), "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    same = isinstance(data, dict) and data.get("material") == material_text and data.get("inputs") == inputs
    if not same or data.get("fingerprint") != fingerprint or data.get("clean") is not True:
        return None
    outputs = data.get("outputs")
    return outputs if isinstance(outputs, dict) else None


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
        from envguard.atomic import write_text

        entry = {
            "material": material_text,
            "inputs": inputs,
            "fingerprint": fingerprint,
            "clean": True,
            "outputs": dict(outputs),
        }
        write_text(path, json.dumps(entry), durable=False, private=True)
    except Exception:  # a cache that cannot be written only costs speed next time
        return


def _parse_path(data: bytes, platform: str | None) -> str:
    import hashlib

    key = hashlib.sha256(data + f"\0{platform}\0{__version__}\0{FORMAT}".encode()).hexdigest()
    return os.path.join(cache_root(), "parsed", f"{key}.json")


def cached_parse(data: bytes, platform: str | None) -> dict[str, object] | None:
    """A previously parsed target file (model.to_dict form), keyed by its exact bytes and platform."""
    try:
        with open(_parse_path(data, platform), "rb") as handle:
            parsed = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) else None


def store_parse(data: bytes, platform: str | None, parsed: Mapping[str, object]) -> None:
    try:
        from envguard.atomic import write_text

        write_text(_parse_path(data, platform), json.dumps(dict(parsed)), durable=False, private=True)
    except Exception:
        return
