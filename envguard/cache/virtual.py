"""This machine's detected virtual packages, remembered per boot, NVIDIA driver and CONDA_OVERRIDE_* setting
(envguard.machine.virtual detects them: rattler's detection loads rattler and may call into the driver)."""

from __future__ import annotations

import json
import os
import zlib

from envguard.cache import BOOT_ID, DRIVER_VERSION, OVERRIDE_VARS, entry, save
from envguard.model import VirtualPackage


def key() -> str:
    """What the detected virtual packages depend on (boot, driver, CONDA_OVERRIDE_*), hashed.

    CRC32 + Adler-32 rather than SHA-256: it only names a cache file, and zlib loads in a fraction of
    hashlib's time.
    """
    parts = [f"{k}={os.environ.get(k, '')}" for k in OVERRIDE_VARS]
    for path in (BOOT_ID, DRIVER_VERSION):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                parts.append(handle.read())
        except OSError:
            parts.append("-")
    data = "\n".join(parts).encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def _path() -> str:
    return entry("", f"virtual-packages-{key()}.json")


def load() -> tuple[VirtualPackage, ...] | None:
    """The remembered virtual packages of this boot, driver and overrides, or None."""
    try:
        with open(_path(), "rb") as handle:
            return tuple(VirtualPackage(**v) for v in json.loads(handle.read()))
    except (OSError, ValueError, TypeError):
        return None


def store(found: tuple[VirtualPackage, ...]) -> None:
    save(_path(), json.dumps([{"name": v.name, "version": v.version, "build": v.build} for v in found]))
