"""Read conda-lock.yml (version 1, as conda-lock and `envguard lock` write it) into one Environment per
platform.

Every defect a hand edit or a truncated write can cause (missing or wrong `version`, broken YAML, a missing
field, a non-hex hash, a platform the lock does not have) is a one-line BadInputError naming the file, the
line where known, and what to do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard import textio
from envguard.channels import channel_from_url, normalize, strip_credentials
from envguard.errors import BadInputError, NoPlatformEntry
from envguard.formats.condalock import meta as lockmeta
from envguard.formats.condalock.pipentry import COMMIT, depends_from_mapping, origins, pip_package
from envguard.formats.condalock.shape import load
from envguard.machine.platform import current_platform
from envguard.model import Environment, Fingerprints, Package, make_environment
from envguard.specs import canonical_name
from envguard.textio import gc_paused, read_text
from envguard.validate import Kind, check_fields, identity_problem

SUPPORTED_VERSION = 1
_HEX = {"md5": re.compile(r"^[0-9a-fA-F]{32}$"), "sha256": re.compile(r"^[0-9a-fA-F]{64}$")}
_REQUIRED = ("name", "version", "manager", "platform", "url", "hash")
_ARCHIVE = re.compile(r"\.(conda|tar\.bz2)$")
FIX = "re-create it with `envguard lock` (or conda-lock)"


def read(path: Path, platform: str | None = None) -> Environment:
    """The lock's environment for `platform` (default: this machine's); a missing platform names the ones
    present."""
    target = platform or current_platform()
    envs = read_all(path)
    if target not in envs:
        have = ", ".join(sorted(envs)) or "none"
        raise NoPlatformEntry(path, target, have)
    return envs[target]


def read_all(path: Path) -> dict[str, Environment]:
    """Every platform of the lock, keyed by platform name."""
    return parse(read_text(path), str(path))


@dataclass(frozen=True)
class LockData:
    """A parsed lock: environments per platform plus the metadata staleness checks need."""

    envs: dict[str, Environment]
    content_hash: dict[str, str]
    channels: tuple[str, ...]
    sources: tuple[str, ...]
    custom: dict[str, str]


def read_lock(path: Path) -> LockData:
    """The whole lock with its metadata."""
    return parse_lock(read_text(path), str(path))


def parse(text: str, origin: str = "conda-lock.yml") -> dict[str, Environment]:
    """Pure parser: lock text -> {platform: Environment}."""
    return parse_lock(text, origin).envs


@gc_paused()
def parse_lock(text: str, origin: str = "conda-lock.yml") -> LockData:
    """Pure parser: lock text -> LockData."""
    data = _load_yaml(text, origin)
    metadata = _metadata(data, origin)
    platforms = [str(p) for p in metadata["platforms"]]
    custom = _custom(metadata, origin)
    entries = data.get("package")
    for platform in (
        {str(e.get("platform")) for e in entries if isinstance(e, dict)} if isinstance(entries, list) else ()
    ):
        _decode(custom, platform, lockmeta.FIELD_PIP_ORIGINS, lockmeta.decode_origins, origin, {})  # one line
    channels = tuple(_channels(metadata, origin))
    if not isinstance(entries, list):
        raise BadInputError(f"{origin}: `package` must be a list of locked packages; {FIX}")
    by_platform: dict[str, list[Package]] = {p: [] for p in platforms}
    skipped: dict[str, int] = {}
    base = os.path.dirname(os.path.abspath(origin))  # relative local sources: the lock's folder's
    for index, entry in enumerate(entries):
        package, entry_platform, optional = _package(entry, index, text, origin, custom, base)
        if optional:
            skipped[entry_platform] = skipped.get(entry_platform, 0) + 1
            continue
        by_platform.setdefault(entry_platform, []).append(package)
    for platform, packages in by_platform.items():
        packages += _by_version(custom, platform, packages, origin)
    envs = {
        plat: _environment(origin, plat, packages, channels, tuple(by_platform), custom, skipped.get(plat, 0))
        for plat, packages in sorted(by_platform.items())
    }
    hashes = {str(k): str(v) for k, v in metadata["content_hash"].items()}
    sources = tuple(str(s) for s in metadata.get("sources") or ())
    return LockData(envs, hashes, channels, sources, custom)


def _environment(
    origin: str,
    platform: str,
    packages: list[Package],
    channels: tuple[str, ...],
    platforms: tuple[str, ...],
    custom: Mapping[str, str],
    skipped: int,
) -> Environment:
    warnings: list[str] = []
    if skipped:
        warnings.append(
            f"{origin}: {skipped} optional (non-main category) package(s) for {platform} left out"
        )
    virtual = _decode(custom, platform, lockmeta.FIELD_VIRTUAL, lockmeta.decode_virtual, origin, ())
    fingerprints: Fingerprints | None = _decode(
        custom, platform, lockmeta.FIELD_FINGERPRINTS, lockmeta.decode_fingerprints, origin, None
    )
    python = next((p.version for p in packages if p.manager == "conda" and p.name == "python"), None)
    implementation: str | None = None
    if python is None:  # a venv's lock says which interpreter it ran
        recorded = _decode(custom, platform, lockmeta.FIELD_PYTHON, lockmeta.decode_python, origin, None)
        if recorded is not None:
            implementation, python = recorded
    return make_environment(
        kind="conda-lock",
        source=origin,
        platform=platform,
        python=python or (fingerprints.python if fingerprints else None),
        python_implementation=implementation,
        channels=channels,
        packages=packages,
        platforms=tuple(sorted(platforms)),
        virtual_packages=virtual,
        fingerprints=fingerprints,
        warnings=tuple(warnings),
    )


def _by_version(custom: Mapping[str, str], platform: str, have: list[Package], origin: str) -> list[Package]:
    """The platform's pip packages locked as name==version only (custom_metadata, no `package:` entry)."""
    pins: dict[str, str] = _decode(
        custom, platform, lockmeta.FIELD_PIP_BY_VERSION, lockmeta.decode_by_version, origin, {}
    )
    names = {p.name for p in have if p.manager == "pip"}
    origins_text = custom.get(lockmeta.platform_key(platform, lockmeta.FIELD_PIP_ORIGINS))
    recorded = origins(origins_text) if origins_text and pins else {}
    found = []
    for name, version in pins.items():
        problem = identity_problem("pip", name, version)
        if problem is not None:
            raise BadInputError(f"{origin}: custom_metadata pip_by_version: {problem}; {FIX}")
        canonical = canonical_name(name)
        if canonical not in names:  # where it came from, when the lock says (a local path it did not write)
            found.append(
                Package(manager="pip", name=canonical, version=version, origin=recorded.get(canonical))
            )
    return found


def _decode(
    custom: Mapping[str, str], platform: str, field: str, decoder: Any, origin: str, default: Any
) -> Any:
    key = lockmeta.platform_key(platform, field)
    if key not in custom:
        return default
    try:
        return decoder(custom[key])
    except (ValueError, TypeError, AttributeError) as exc:
        raise BadInputError(
            f"{origin}: metadata.custom_metadata[{key!r}] is unreadable ({exc}); {FIX}"
        ) from exc


# --- structure
# ------------------------------------------------------------------------------------------------


def _load_yaml(text: str, origin: str) -> dict[str, Any]:
    import yaml

    try:
        data = load(text)  # the shape envguard writes, else PyYAML's C loader
        if data is None:
            data = textio.load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "syntax error"
        raise BadInputError(
            f"{origin}{line}: malformed YAML ({problem}); the lock is truncated or damaged; {FIX}"
        ) from exc
    except yaml.YAMLError as exc:
        raise BadInputError(f"{origin}: malformed YAML ({textio.yaml_reason(exc)}); {FIX}") from exc
    if not isinstance(data, dict):
        raise BadInputError(
            f"{origin}: not a conda-lock file (expected a mapping with version/metadata/package)"
        )
    version = data.get("version")
    if version is None:
        raise BadInputError(f"{origin}: no `version` key; not a conda-lock.yml or damaged; {FIX}")
    if version != SUPPORTED_VERSION:
        raise BadInputError(
            f"{origin}: conda-lock version {version!r} is not supported (expected {SUPPORTED_VERSION}); {FIX}"
        )
    return data


def _metadata(data: Mapping[str, Any], origin: str) -> Mapping[str, Any]:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        raise BadInputError(f"{origin}: missing `metadata` mapping; {FIX}")
    for key, kind in (("platforms", list), ("channels", list), ("content_hash", dict)):
        if not isinstance(metadata.get(key), kind):
            raise BadInputError(f"{origin}: metadata lacks `{key}` (or it has the wrong type); {FIX}")
    check_fields(metadata, {"sources": "list", "custom_metadata": "dict"}, f"{origin}: metadata", FIX)
    return metadata


def _custom(metadata: Mapping[str, Any], origin: str) -> dict[str, str]:
    custom = metadata.get("custom_metadata") or {}
    if not isinstance(custom, dict):
        raise BadInputError(f"{origin}: metadata.custom_metadata must be a mapping of strings; {FIX}")
    return {str(k): str(v) for k, v in custom.items()}


def _channels(metadata: Mapping[str, Any], origin: str) -> list[str]:
    result = []
    for item in metadata["channels"]:
        url = item.get("url") if isinstance(item, dict) else item
        if not isinstance(url, str) or not url:
            raise BadInputError(f"{origin}: each metadata.channels entry needs a `url`; {FIX}")
        result.append(normalize(strip_credentials(url)))
    return result


def _package(
    entry: Any, index: int, text: str, origin: str, custom: Mapping[str, str], base: str
) -> tuple[Package, str, bool]:
    if not isinstance(entry, dict) or (
        not all(map(entry.get, _REQUIRED))  # every field set (the common case): none missing
        and any(_missing(entry, k) for k in _REQUIRED)
    ):
        _invalid(entry, index, _where(origin, text, index))
    where = _Where(origin, text, index)
    check_fields(entry, _ENTRY_FIELDS, where, FIX)
    label = entry["name"]
    manager = entry["manager"]
    if manager not in ("conda", "pip"):
        raise BadInputError(f"{where}: package {label} has unknown manager {manager!r} (conda or pip); {FIX}")
    hashes = _hashes(entry["hash"], where, str(label), manager)
    platform = str(entry["platform"])
    optional = bool(entry.get("optional", False)) and entry.get("category", "main") != "main"
    if manager == "pip":  # its name is canonicalised below: the name as written is what must be valid
        problem = identity_problem("pip", str(label), str(entry["version"]))
        if problem is not None:
            raise BadInputError(f"{where}: {problem}; {FIX}")
    package = (
        _conda(entry, hashes) if manager == "conda" else pip_package(entry, hashes, custom, platform, base)
    )
    problem = package.identity_problem()
    if problem is not None:
        raise BadInputError(f"{where}: {problem}; {FIX}")
    return package, platform, optional


_ENTRY_FIELDS: dict[str, Kind] = {
    "dependencies": "dict",
    "url": "str",
    "build": "str",
    "category": "str",
    "source": "dict",
}


def _hashes(value: Any, where: object, label: str, manager: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise BadInputError(f"{where}: package {label}: `hash` must be a mapping with md5/sha256; {FIX}")
    result: dict[str, str] = {}
    for algo, pattern in _HEX.items():
        digest = value.get(algo)
        if digest is None:
            continue
        vcs_commit = (
            manager == "pip" and algo == "sha256" and isinstance(digest, str) and COMMIT.fullmatch(digest)
        )
        if not isinstance(digest, str) or not (pattern.fullmatch(digest) or vcs_commit):
            raise BadInputError(f"{where}: package {label}: {algo} {digest!r} is not a hex digest; {FIX}")
        result[algo] = digest.lower()
    if manager == "conda" and "md5" not in result:
        raise BadInputError(f"{where}: package {label}: conda packages need an md5 hash; {FIX}")
    return result


def _conda(entry: Mapping[str, Any], hashes: Mapping[str, str]) -> Package:
    url = strip_credentials(str(entry["url"]))
    channel, subdir = channel_from_url(url)
    build = str(entry.get("build") or "") or build_from_url(url)
    return Package(
        manager="conda",
        name=str(entry["name"]),
        version=str(entry["version"]),
        build=build,
        channel=channel,
        subdir=subdir,
        url=url,
        md5=hashes.get("md5", ""),
        sha256=hashes.get("sha256", ""),
        depends=depends_from_mapping(entry.get("dependencies")),
    )


def build_from_url(url: str) -> str:
    """`.../numpy-1.26.4-py311h64a7726_0.conda` -> `py311h64a7726_0`."""
    stem = _ARCHIVE.sub("", url.rsplit("/", 1)[-1])
    parts = stem.rsplit("-", 2)
    return parts[2] if len(parts) == 3 else ""


def _missing(entry: Mapping[str, Any], key: str) -> bool:
    """A required field absent or empty; a pip entry's `url` may be empty (name==version only)."""
    value = entry.get(key)
    return value is None or (value == "" and not (key == "url" and entry.get("manager") == "pip"))


def _invalid(entry: Any, index: int, where: str) -> None:
    if not isinstance(entry, dict):
        raise BadInputError(f"{where}: package entry #{index + 1} is not a mapping; {FIX}")
    label = entry.get("name") or f"#{index + 1}"
    missing = next(k for k in _REQUIRED if _missing(entry, k))
    raise BadInputError(f"{where}: package {label} lacks `{missing}`; {FIX}")


class _Where:
    """Formats as `file:line` of a package entry, computed only when an error message needs it."""

    def __init__(self, origin: str, text: str, index: int) -> None:
        self.origin, self.text, self.index = origin, text, index

    def __str__(self) -> str:
        return _where(self.origin, self.text, self.index)


def _where(origin: str, text: str, index: int) -> str:
    """`file:line` of the index-th `package:` entry, found by scanning (only used for error messages)."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.rstrip() == "package:"), None)
    if start is None:
        return origin
    count = -1
    for number in range(start + 1, len(lines)):
        if lines[number].startswith("- ") or lines[number].rstrip() == "-":
            count += 1
            if count == index:
                return f"{origin}:{number + 1}"
    return origin
