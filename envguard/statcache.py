"""The `envguard check` fast path: confirm an unchanged environment from file metadata alone.

The stat fingerprint covers `conda-meta/` (every record's name, size, mtime, ctime, inode) and, in each
site-packages folder, every `*.dist-info`/`*.egg-info` folder and its files plus `*.pth` and `*.egg-link` files.
Any install, removal, upgrade, reinstall or edit of those changes it (ctime cannot be set back by a user).

A cached verdict is keyed on the exact bytes of the check's inputs (lock, environment.yml), the prefix, the
options and envguard's version, and holds the stat fingerprint of the last full check that was CLEAN. Only an
identical fingerprint under an identical key short-circuits, and only to "clean": drift is never cached, so the
cache can never turn real drift into a pass. The module imports nothing heavy (no yaml, rattler, rich, deepdiff).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from envguard import __version__

FORMAT = 1
_PIP_SUFFIXES = (".dist-info", ".egg-info", ".pth", ".egg-link")


def _cache_root() -> Path:
    from envguard.virtual import cache_dir

    return cache_dir() / "check"


def stat_fingerprint(prefix: Path) -> str:
    """sha256 over the stat metadata of conda-meta/ and the pip metadata folders of `prefix`."""
    digest = hashlib.sha256()
    _scan(prefix / "conda-meta", digest, descend=False)
    for site in _site_packages(prefix):
        digest.update(f"site {site.name}\n".encode())
        _scan(site, digest, descend=True)
    return digest.hexdigest()


def _scan(folder: Path, digest: Any, *, descend: bool) -> None:
    try:
        with os.scandir(folder) as entries:
            items = sorted(entries, key=lambda e: e.name)
    except OSError:
        digest.update(f"missing {folder.name}\n".encode())
        return
    for entry in items:
        if descend and not entry.name.endswith(_PIP_SUFFIXES):
            continue
        _stat_line(entry, digest)
        if descend and entry.is_dir(follow_symlinks=False):
            try:
                with os.scandir(entry.path) as inner:
                    for item in sorted(inner, key=lambda e: e.name):
                        _stat_line(item, digest)
            except OSError:
                digest.update(b"unreadable\n")


def _stat_line(entry: os.DirEntry[str], digest: Any) -> None:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        digest.update(f"{entry.name}\0gone\n".encode())
        return
    digest.update(f"{entry.name}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\n".encode())


def _site_packages(prefix: Path) -> list[Path]:
    found = []
    lib = prefix / "lib"
    try:
        names = sorted(n for n in os.listdir(lib) if n.startswith("python"))
    except OSError:
        names = []
    found += [lib / n / "site-packages" for n in names if (lib / n / "site-packages").is_dir()]
    windows = prefix / "Lib" / "site-packages"
    if windows.is_dir():
        found.append(windows)
    return found


def check_key(inputs: Iterable[bytes], prefix: Path, options: Mapping[str, str]) -> str:
    """The identity of a check: input file bytes, the prefix, the options and this envguard's version."""
    digest = hashlib.sha256(f"envguard {__version__} check-cache {FORMAT}\n".encode())
    for data in inputs:
        digest.update(hashlib.sha256(data).digest())
    digest.update(os.path.realpath(prefix).encode() + b"\0")
    for key in sorted(options):
        digest.update(f"{key}={options[key]}\n".encode())
    return digest.hexdigest()


def lookup(key: str, fingerprint: str) -> dict[str, Any] | None:
    """The stored clean outputs when the last clean full check had exactly this fingerprint, else None."""
    try:
        data = json.loads((_cache_root() / f"{key}.json").read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint or data.get("clean") is not True:
        return None
    outputs = data.get("outputs")
    return outputs if isinstance(outputs, dict) else None


def store(key: str, fingerprint: str, clean: bool, outputs: Mapping[str, Any]) -> None:
    """Remember a full check's verdict; anything but clean removes the entry (drift is never cached)."""
    path = _cache_root() / f"{key}.json"
    try:
        if not clean:
            path.unlink(missing_ok=True)
            return
        from envguard.atomic import write_text

        write_text(path, json.dumps({"fingerprint": fingerprint, "clean": True, "outputs": dict(outputs)}))
    except Exception:  # a cache that cannot be written only costs speed next time
        return


def cached_parse(data: bytes, platform: str | None) -> dict[str, Any] | None:
    """A previously parsed target file (model.to_dict form), keyed by its exact bytes and platform."""
    key = hashlib.sha256(data + f"\0{platform}\0{__version__}\0{FORMAT}".encode()).hexdigest()
    try:
        parsed = json.loads((_cache_root() / "parsed" / f"{key}.json").read_bytes())
    except (OSError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) else None


def store_parse(data: bytes, platform: str | None, parsed: Mapping[str, Any]) -> None:
    key = hashlib.sha256(data + f"\0{platform}\0{__version__}\0{FORMAT}".encode()).hexdigest()
    try:
        from envguard.atomic import write_text

        write_text(_cache_root() / "parsed" / f"{key}.json", json.dumps(dict(parsed)))
    except Exception:
        return
