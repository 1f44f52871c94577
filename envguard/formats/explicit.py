"""Read and write explicit spec files (`conda list --explicit`, conda-lock's `*.lock`): one package URL a line
after `@EXPLICIT`.

Accepted hash suffixes are conda's own: `#<md5>`, `#sha256:<hex>` and `#<64-hex sha256>`. Credentials in URLs
are stripped before anything leaves this module. Name, version and build come from the archive file name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from envguard.channels import KNOWN_SUBDIRS, channel_from_url, strip_credentials
from envguard.depgraph import install_order
from envguard.errors import BadInputError, where
from envguard.model import Environment, Package, make_environment
from envguard.textio import read_text

EXPLICIT_MARKER = "@EXPLICIT"
ARCHIVE_SUFFIXES = (".conda", ".tar.bz2")
_PLATFORM = re.compile(r"^#\s*platform:\s*(\S+)\s*$")
_HASH = re.compile(r"^(?:(?P<md5>[0-9a-fA-F]{32})|(?:sha256:)?(?P<sha256>[0-9a-fA-F]{64}))$")


@dataclass(frozen=True, slots=True)
class ExplicitEntry:
    """One package line: the credential-free URL and whichever hash the line carried."""

    url: str
    md5: str = ""
    sha256: str = ""


def render(
    packages: Iterable[Package], header: Sequence[str] = (), footer: Sequence[str] = ()
) -> tuple[str, tuple[str, ...]]:
    """The one explicit-spec writer: `header` comment lines, `@EXPLICIT`, one credential-free `URL#sha256`
    (else `#md5`) per conda package in conda's install order (what `conda list --explicit --sha256` writes),
    `footer` comment lines. Returns the text and a warning per package left out (no URL) or written without a
    hash."""
    warnings: list[str] = []
    lines = [*header, EXPLICIT_MARKER]
    for package in install_order(p for p in packages if p.manager == "conda"):
        if not package.url:
            warnings.append(
                f"{package.name} {package.version}: no download URL recorded; left out of the explicit spec"
            )
            continue
        digest = package.sha256 or package.md5
        if not digest:
            warnings.append(
                f"{package.name} {package.version}: no md5 or sha256 recorded; written without a hash"
            )
        url = strip_credentials(package.url)
        lines.append(f"{url}#{digest}" if digest else url)
    return "\n".join([*lines, *footer]) + "\n", tuple(warnings)


def read(path: Path) -> Environment:
    """Read an explicit spec file into an Environment (kind `explicit`)."""
    return parse_explicit_text(read_text(path), origin=str(path))


def parse_explicit_text(text: str, origin: str = "<explicit>") -> Environment:
    """Parse explicit spec text; a malformed line is bad input naming `origin:line`."""
    platform: str | None = None
    seen_marker = False
    packages: dict[str, Package] = {}
    warnings: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip().lstrip("\ufeff")
        if not line:
            continue
        if line.startswith("#"):
            header = _PLATFORM.match(line)
            if header and platform is None:
                platform = header.group(1)
            continue
        if line == EXPLICIT_MARKER:
            seen_marker = True
            continue
        if not seen_marker:
            raise BadInputError(_before_marker(line, origin, number))
        package = entry_to_package(parse_line(line, origin, number))
        problem = package.identity_problem()
        if problem is not None:
            raise BadInputError(f"{where(origin, number)}: {problem}; fix or remove the line")
        if package.name in packages:
            warnings.append(f"{where(origin, number)}: {package.name} listed twice; the later URL wins")
        packages[package.name] = package
    if not seen_marker:
        raise BadInputError(f"{origin}: no {EXPLICIT_MARKER} line; not an explicit spec file")
    return _environment(origin, platform, list(packages.values()), warnings)


def _before_marker(line: str, origin: str, number: int) -> str:
    if "://" in line or line.split("#", 1)[0].strip().endswith(ARCHIVE_SUFFIXES):
        return (
            f"{where(origin, number)}: package URL before any {EXPLICIT_MARKER} line; add {EXPLICIT_MARKER} "
            "above the URLs"
        )
    return (
        f"{where(origin, number)}: {_shown(line)!r} before the {EXPLICIT_MARKER} line; an explicit spec "
        "lists "
        f"package URLs after {EXPLICIT_MARKER} (use an environment.yml for MatchSpecs)"
    )


def parse_line(line: str, origin: str = "<explicit>", number: int | None = None) -> ExplicitEntry:
    """Split `URL[#hash]` into an ExplicitEntry; anything else is bad input naming the line."""
    url, _, fragment = line.partition("#")
    url = url.strip()
    md5 = sha256 = ""
    if fragment:
        found = _HASH.match(fragment.strip())
        if not found:
            raise BadInputError(
                f"{where(origin, number)}: bad hash {_clip(fragment)!r} after the URL; expected #<md5>, "
                "#sha256:<hex> or #<64-hex sha256>"
            )
        md5 = (found.group("md5") or "").lower()
        sha256 = (found.group("sha256") or "").lower()
    filename = url.replace("\\", "/").rsplit("/", 1)[-1]
    if not filename.endswith(ARCHIVE_SUFFIXES) or " " in url:
        raise BadInputError(
            f"{where(origin, number)}: {_shown(line)!r} is not a package URL; expected "
            "<channel>/<subdir>/<name>-<version>-<build>.conda (or .tar.bz2)"
        )
    if len(_stem(filename).rsplit("-", 2)) != 3:
        raise BadInputError(
            f"{where(origin, number)}: cannot read name-version-build from {filename!r}; "
            "expected <name>-<version>-<build>.conda (or .tar.bz2)"
        )
    try:
        clean = strip_credentials(url)
    except ValueError as exc:
        raise BadInputError(
            f"{where(origin, number)}: malformed URL ({exc}); fix or remove the line"
        ) from exc
    return ExplicitEntry(url=clean, md5=md5, sha256=sha256)


def entry_to_package(entry: ExplicitEntry) -> Package:
    """A conda Package from an explicit entry: name/version/build from the file name, channel/subdir from the
    URL."""
    filename = entry.url.replace("\\", "/").rsplit("/", 1)[-1]
    name, version, build = _stem(filename).rsplit("-", 2)
    channel, subdir = channel_from_url(entry.url) if "/" in entry.url else ("", "")
    return Package(
        manager="conda",
        name=name,
        version=version,
        build=build,
        build_number=_build_number(build),
        channel=channel,
        subdir=subdir,
        url=entry.url,
        md5=entry.md5,
        sha256=entry.sha256,
    )


def _environment(
    origin: str, platform: str | None, packages: list[Package], warnings: list[str]
) -> Environment:
    channels: list[str] = []
    for package in packages:
        if package.channel and package.channel not in channels:
            channels.append(package.channel)
    if platform is None:
        subdirs = {p.subdir for p in packages if p.subdir and p.subdir != "noarch"}
        platform = subdirs.pop() if len(subdirs) == 1 else None
    elif platform not in KNOWN_SUBDIRS:
        warnings.append(f"{origin}: unknown platform {platform!r} in the '# platform:' header")
    python = next((p.version for p in packages if p.name == "python"), None)
    return make_environment(
        kind="explicit",
        source=origin,
        platform=platform,
        python=python,
        channels=tuple(channels),
        packages=packages,
        warnings=tuple(warnings),
    )


def _stem(filename: str) -> str:
    for suffix in ARCHIVE_SUFFIXES:
        if filename.endswith(suffix):
            return filename[: -len(suffix)]
    return filename


def _build_number(build: str) -> int:
    """conda's convention: the build number is the build string's last `_`-separated field when numeric."""
    tail = build.rsplit("_", 1)[-1]
    # ASCII digits only (int() accepts any Unicode digit) and never a 5,000-digit string
    return int(tail) if tail.isascii() and tail.isdigit() and len(tail) <= 18 else 0


def _shown(line: str) -> str:
    """A line as it may appear in a message: credentials stripped, clipped."""
    try:
        line = strip_credentials(line)
    except ValueError:
        line = "<unparseable URL>"
    return _clip(line)


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
