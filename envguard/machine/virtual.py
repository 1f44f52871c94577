"""This machine's virtual packages (`__cuda`, `__glibc`, `__archspec`...), detected by rattler.

Detection loads rattler (tens of ms) and may call into the NVIDIA driver, so the result is cached per boot,
per driver and per CONDA_OVERRIDE_* setting; anything that could change the answer changes the cache key.
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from pathlib import Path

from envguard.cache import OVERRIDE_VARS, cache_dir
from envguard.model import VirtualPackage


def cache_key() -> str:
    """What the detected virtual packages depend on (boot, driver, CONDA_OVERRIDE_*), hashed.

    CRC32 + Adler-32 rather than SHA-256: it only names a cache file, and zlib loads in a fraction of
    hashlib's time.
    """
    parts = [f"{k}={os.environ.get(k, '')}" for k in OVERRIDE_VARS]
    for path in ("/proc/sys/kernel/random/boot_id", "/proc/driver/nvidia/version"):
        try:
            parts.append(Path(path).read_text(errors="replace"))
        except OSError:
            parts.append("-")
    data = "\n".join(parts).encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def detect(use_cache: bool = True) -> tuple[VirtualPackage, ...]:
    """Virtual packages of this machine, honouring CONDA_OVERRIDE_* as conda does."""
    cache = cache_dir() / f"virtual-packages-{cache_key()}.json"
    if use_cache:
        try:
            return tuple(VirtualPackage(**v) for v in json.loads(cache.read_bytes()))
        except (OSError, ValueError, TypeError):
            pass
    found = _detect_with_rattler()
    if use_cache:
        from envguard.atomic import write_text

        with contextlib.suppress(Exception):
            write_text(
                cache,
                json.dumps([{"name": v.name, "version": v.version, "build": v.build} for v in found]),
                durable=False,
                private=True,
            )
    return found


def _detect_with_rattler() -> tuple[VirtualPackage, ...]:
    import rattler

    overrides = rattler.VirtualPackageOverrides.from_env()
    detected = rattler.VirtualPackage.detect(overrides)
    result = []
    for item in detected:
        generic = item.into_generic()
        result.append(
            VirtualPackage(generic.name.normalized, str(generic.version), str(generic.build_string))
        )
    return tuple(sorted(result, key=lambda v: v.name))


def parse_override(spec: str) -> VirtualPackage:
    """`__cuda=12.1` or `__cuda=12.1=0` -> VirtualPackage."""
    name, _, rest = spec.partition("=")
    version, _, build = rest.partition("=")
    return VirtualPackage(name.strip(), version.strip() or "0", build.strip() or "0")
