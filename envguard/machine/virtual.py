"""This machine's virtual packages (`__cuda`, `__glibc`, `__archspec`...), detected by rattler.

Detection loads rattler (tens of ms) and may call into the NVIDIA driver, so the result is cached per boot,
per driver and per CONDA_OVERRIDE_* setting (envguard.cache.virtual); anything that could change the answer
changes the cache key.
"""

from __future__ import annotations

from envguard.cache import virtual as remembered
from envguard.model import VirtualPackage


def detect(use_cache: bool = True) -> tuple[VirtualPackage, ...]:
    """Virtual packages of this machine, honouring CONDA_OVERRIDE_* as conda does (remembered per boot,
    driver and override setting: envguard.cache.virtual)."""
    if use_cache:
        known = remembered.load()
        if known is not None:
            return known
    found = _detect_with_rattler()
    if use_cache:
        remembered.store(found)
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
