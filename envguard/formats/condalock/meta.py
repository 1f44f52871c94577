"""envguard's extras inside a conda-lock.yml: `metadata.custom_metadata` keys (str -> str) and their encoding.

conda-lock allows only string values there, so structured values are compact JSON. Keys are namespaced
`envguard.*` and per platform `envguard.<platform>.*`, so conda-lock and other tools pass them through
untouched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from envguard.model import FINGERPRINT_FIELDS, Fingerprints, PipOrigin, VirtualPackage, fingerprints_from

PREFIX = "envguard."
VERSION_KEY = "envguard.version"
SOURCE_KIND_KEY = "envguard.source_kind"
REPRODUCE_KEY = "envguard.reproduce"
EXCLUDE_NEWER_KEY = "envguard.exclude_newer"  # solved as of this UTC time (`lock --exclude-newer`)
FIELD_VIRTUAL = "virtual_packages"
FIELD_FINGERPRINTS = "fingerprints"
FIELD_PIP_ORIGINS = "pip_origins"
FIELD_PIP_INDEXES = "pip_indexes"  # pip package -> the index or find-links location its wheel is on
# pip packages locked as name==version only (no file known): `name==version,...`, kept out of `package:` (a
# conda-lock entry needs a URL pip can install); an older envguard wrote the names alone, with the entries
FIELD_PIP_BY_VERSION = "pip_by_version"
FIELD_PYTHON = "python"  # a venv's interpreter (`cpython 3.11.7`): no conda package says it there


def encode_python(implementation: str | None, version: str) -> str:
    """`cpython 3.11.7`."""
    return f"{implementation or 'cpython'} {version}"


def decode_python(text: str) -> tuple[str, str]:
    """(implementation, version) from `cpython 3.11.7` (a bare `3.11.7` is CPython)."""
    implementation, _, version = text.strip().rpartition(" ")
    if not version:
        raise ValueError("expected `IMPLEMENTATION VERSION`, e.g. `cpython 3.11.7`")
    return implementation or "cpython", version


def platform_key(platform: str, field: str) -> str:
    """`envguard.linux-64.virtual_packages`."""
    return f"{PREFIX}{platform}.{field}"


def encode_virtual(packages: tuple[VirtualPackage, ...]) -> str:
    """`__cuda=12.1=0,__glibc=2.28=0` (sorted by name)."""
    return ",".join(f"{v.name}={v.version}={v.build}" for v in sorted(packages, key=lambda v: v.name))


def decode_virtual(text: str) -> tuple[VirtualPackage, ...]:
    result = []
    for item in text.split(","):
        name, _, rest = item.strip().partition("=")
        version, _, build = rest.partition("=")
        if name:
            result.append(VirtualPackage(name, version or "0", build or "0"))
    return tuple(sorted(result, key=lambda v: v.name))


def encode_fingerprints(fingerprints: Fingerprints) -> str:
    data: dict[str, Any] = {k: getattr(fingerprints, k) for k in FINGERPRINT_FIELDS}
    data["cuda_arch_list"] = list(fingerprints.cuda_arch_list)
    return json.dumps(
        {k: v for k, v in data.items() if v not in (None, [])}, sort_keys=True, separators=(",", ":")
    )


def decode_fingerprints(text: str) -> Fingerprints:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("fingerprints must be a JSON object")
    return fingerprints_from({k: v for k, v in data.items() if k != "errors"})


def encode_origins(origins: Mapping[str, PipOrigin]) -> str:
    data = {
        name: {
            k: v
            for k, v in (
                ("url", o.url),
                ("editable", o.editable),
                ("vcs", o.vcs),
                ("commit_id", o.commit_id),
                ("requested_revision", o.requested_revision),
            )
            if v
        }
        for name, o in sorted(origins.items())
    }
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def decode_origins(text: str) -> dict[str, PipOrigin]:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("pip origins must be a JSON object")
    return {
        str(name): PipOrigin(
            url=str(o.get("url", "")),
            editable=bool(o.get("editable", False)),
            vcs=str(o.get("vcs", "")),
            commit_id=str(o.get("commit_id", "")),
            requested_revision=str(o.get("requested_revision", "")),
        )
        for name, o in data.items()
        if isinstance(o, dict)
    }


def encode_by_version(pins: Mapping[str, str]) -> str:
    """`name==version,...` (sorted by name)."""
    return ",".join(f"{name}=={version}" for name, version in sorted(pins.items()))


def decode_by_version(text: str) -> dict[str, str]:
    """name -> version from `name==version,...`; a bare name (an older lock: its entry is in `package:`) is
    skipped."""
    pins: dict[str, str] = {}
    for item in text.split(","):
        name, sep, version = item.strip().partition("==")
        if sep and name and version:
            pins[name] = version
    return pins
