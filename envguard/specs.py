"""Package names, versions and specs: the two ways envguard spells a name (PEP 503 normalised pip project
names, the package a conda spec names), conda's version order, conda MatchSpecs and pip requirement lines
(parsing, validation and matching against packages).

Conda specs go through py-rattler's MatchSpec (conda's own grammar and version order, lenient like conda);
pip lines through `packaging`; both are imported only where a spec is matched, so reading a prefix (which
needs only the names) loads neither. Results are cached: a check matches hundreds of specs against packages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from envguard.channels import normalize
from envguard.errors import BadInputError, first_line
from envguard.model import Package

_NORMALIZE = re.compile(r"[-_.]+")
_SPEC_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_PIP_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
PIP_OPTION_PREFIXES = ("--", "-i ", "-f ", "--pre")


def canonical_name(name: str) -> str:
    """PEP 503 normalised project name: `Typing_Extensions` -> `typing-extensions`."""
    if "_" not in name and "." not in name and "--" not in name:  # most names: nothing to collapse
        return name.lower()
    return _NORMALIZE.sub("-", name).lower()


def spec_name(spec: str) -> str:
    """The package name of a MatchSpec string: `conda-forge::numpy[version='<2']` -> `numpy`."""
    rest = spec.split("::", 1)[-1].strip()
    match = _SPEC_NAME.match(rest)
    return match.group(0).lower() if match else rest.lower()


@lru_cache(maxsize=8192)
def _version(text: str) -> Any:
    import rattler

    return rattler.Version(text)


def version_less(a: str, b: str) -> bool:
    """`a < b` in conda's version order (`12.4 == 12.4.0`). Plain dotted numbers, the common case for virtual
    packages, are compared without loading rattler; anything else goes through rattler.Version. An unparsable
    `a` counts as less (it cannot satisfy a minimum)."""
    plain_a, plain_b = _plain_version(a), _plain_version(b)
    if plain_a is not None and plain_b is not None:
        return plain_a < plain_b
    try:
        return bool(_version(a.strip()) < _version(b.strip()))
    except Exception:  # rattler raises its own exception type for an unparsable version
        return _plain_version(b) is not None or b.strip() != a.strip()


def _plain_version(text: str) -> tuple[int, ...] | None:
    parts = text.strip().split(".")
    if not all(p.isdigit() and p.isascii() for p in parts):
        return None
    numbers = [int(p) for p in parts]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()  # conda pads with zeros: 12.4 == 12.4.0
    return tuple(numbers)


@dataclass(frozen=True, slots=True)
class CondaSpec:
    """The parts of a conda MatchSpec that envguard reasons about."""

    raw: str
    name: str
    channel: str | None
    version: str | None
    build: str | None
    build_number: str | None
    subdir: str | None
    md5: str | None
    sha256: str | None

    def canonical(self) -> str:
        """A normalised spec string (`conda-forge::numpy >=1.21,<2`)."""
        text = self.name
        if self.version:
            text += f" {self.version}"
        if self.build:
            text += f" {self.build}"
        return f"{self.channel}::{text}" if self.channel else text


@lru_cache(maxsize=4096)
def _rattler_spec(spec: str) -> Any:
    import rattler

    return rattler.MatchSpec(spec, strict=False)


@lru_cache(maxsize=4096)
def parse_conda(spec: str, origin: str = "") -> CondaSpec:
    """Parse a conda MatchSpec; an invalid one is bad input naming `origin` (file:line) and the spec."""
    text = spec.strip()
    try:
        ms = _rattler_spec(text)
    except Exception as exc:  # rattler raises its own exception types
        where = f"{origin}: " if origin else ""
        reason = first_line(exc)
        raise BadInputError(f"{where}invalid conda spec {text!r} ({reason}); fix the spec") from exc
    channel = None
    if ms.channel is not None:
        channel = normalize(str(ms.channel.base_url or ms.channel.name))
    return CondaSpec(
        raw=text,
        name=ms.name.normalized if hasattr(ms.name, "normalized") else str(ms.name),
        channel=channel,
        version=str(ms.version) if ms.version is not None else None,
        build=str(ms.build) if ms.build is not None else None,
        build_number=str(ms.build_number) if ms.build_number is not None else None,
        subdir=str(ms.subdir) if ms.subdir else None,
        md5=ms.md5.hex() if isinstance(ms.md5, bytes) else (str(ms.md5) if ms.md5 else None),
        sha256=ms.sha256.hex() if isinstance(ms.sha256, bytes) else (str(ms.sha256) if ms.sha256 else None),
    )


def conda_matches(spec: CondaSpec | str, package: Package, *, check_channel: bool = True) -> bool:
    """Does a conda package satisfy the spec? Name, version, build glob and build number are matched by
    rattler (conda's own MatchSpec semantics); channel, subdir and hashes by envguard, on normalised channel
    names and only where both sides know them (locks and old records lack some)."""
    parsed = parse_conda(spec) if isinstance(spec, str) else spec
    if package.manager != "conda" or package.name != parsed.name:
        return False
    if (parsed.version or parsed.build or parsed.build_number) and not _record_matches(parsed, package):
        return False
    if check_channel and parsed.channel and package.channel and parsed.channel != package.channel:
        return False
    if parsed.subdir and package.subdir and parsed.subdir != package.subdir:
        return False
    if parsed.md5 and package.md5 and parsed.md5 != package.md5:
        return False
    return not (parsed.sha256 and package.sha256 and parsed.sha256 != package.sha256)


@lru_cache(maxsize=4096)
def _core_spec(name: str, version: str | None, build: str | None, build_number: str | None) -> Any:
    """The spec's name/version/build/build-number part as a rattler MatchSpec."""
    import rattler

    fields = [
        f'{key}="{value}"'
        for key, value in (("version", version), ("build", build), ("build_number", build_number))
        if value
    ]
    return rattler.MatchSpec(f"{name}[{', '.join(fields)}]", strict=False)


def _record_matches(parsed: CondaSpec, package: Package) -> bool:
    import rattler

    build = parsed.build
    if not package.build:  # a source that records no build string: only `*` can match it
        if build not in (None, "*"):
            return False
        build = None
    try:
        record = rattler.PackageRecord(
            package.name,
            package.version,
            rattler.BuildString(package.build or "_"),
            package.build_number,
            package.subdir or "noarch",
        )
    except Exception:  # an unparsable installed version cannot satisfy a constraint
        return False
    return bool(_core_spec(parsed.name, parsed.version, build, parsed.build_number).matches(record))


# --- pip ----------------------------------------------------------------------------------------------------


def is_pip_option(line: str) -> bool:
    """True for pip option lines (`--extra-index-url ...`, `--pre`, `-i URL`, `-f DIR`) that name no
    package."""
    text = line.strip()
    return text.startswith(PIP_OPTION_PREFIXES) or text in ("-i", "-f")


def pip_name(line: str) -> str | None:
    """PEP 503 name of a pip requirement line, or None for `-r file`, `-e path`, bare URLs and options."""
    text = line.strip()
    if text.startswith("-") or "://" in text.split("@", 1)[0] or text.startswith((".", "/", "~")):
        egg = re.search(r"#egg=([A-Za-z0-9._-]+)", text)
        return canonical_name(egg.group(1)) if egg else None
    match = _PIP_NAME.match(text)
    return canonical_name(match.group(1)) if match else None


def pip_matches(line: str, package: Package) -> bool | None:
    """Does an installed pip package satisfy a requirement line? None when the line cannot be judged
    (`-r file`, `-e .`, a URL without #egg=)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion, Version

    name = pip_name(line)
    if name is None:
        return None
    if name != package.name:
        return False
    text = line.strip()
    if text.startswith("-") or "://" in text:
        return True
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    if not requirement.specifier:
        return True
    try:
        return requirement.specifier.contains(Version(package.version), prereleases=True)
    except InvalidVersion:
        return False
