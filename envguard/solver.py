"""Solve conda specs with py-rattler (the engine behind pixi) for one platform, offline-capable with file:// channels.

Used by `lock -f environment.yml`, `create` and `verify`. Virtual packages are always explicit: the caller says
whether the target has a GPU (`__cuda`) — nothing is silently assumed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.channels import channel_from_url, normalize, strip_credentials
from envguard.errors import BadInputError, OperationalError
from envguard.model import Package, VirtualPackage

DEFAULTS = ("https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r")


@dataclass(frozen=True)
class SolveResult:
    """Solved packages for one platform; `records` are rattler RepoDataRecords ready for `install`."""

    platform: str
    packages: tuple[Package, ...]
    records: tuple[Any, ...]


def expand_channels(channels: Sequence[str], specs: Sequence[str] = ()) -> list[str]:
    """Channel list for rattler: `defaults` expanded, `nodefaults` dropped, `channel::pkg` channels appended."""
    result: list[str] = []
    for channel in channels:
        if channel == "nodefaults":
            continue
        for item in DEFAULTS if channel == "defaults" else (channel,):
            if item not in result:
                result.append(item)
    for spec in specs:
        if "::" in spec:
            channel = spec.split("::", 1)[0].strip()
            if "/" in channel and channel.rsplit("/", 1)[-1] in (
                "noarch",
                "linux-64",
                "osx-64",
                "osx-arm64",
                "win-64",
            ):
                channel = channel.rsplit("/", 1)[0]
            if channel and channel not in result:
                result.append(channel)
    return result


def default_virtual_packages(platform: str, cuda: str | None) -> tuple[VirtualPackage, ...]:
    """The virtual packages a target platform offers; `__cuda` only when a CUDA version is given."""
    system = platform.split("-", 1)[0]
    found: list[VirtualPackage] = []
    if system in ("linux", "osx"):
        found.append(VirtualPackage("__unix", "0"))
    if system == "linux":
        found += [VirtualPackage("__linux", "5.10"), VirtualPackage("__glibc", "2.28")]
    elif system == "osx":
        found.append(VirtualPackage("__osx", "13.0"))
    elif system == "win":
        found.append(VirtualPackage("__win", "0"))
    if platform.endswith("-64") and system != "win":
        found.append(VirtualPackage("__archspec", "1", "x86_64"))
    elif platform.endswith(("arm64", "aarch64")):
        found.append(VirtualPackage("__archspec", "1", "aarch64" if system == "linux" else "arm64"))
    if cuda:
        found.append(VirtualPackage("__cuda", cuda))
    return tuple(found)


def solve(
    specs: Sequence[str],
    channels: Sequence[str],
    platform: str,
    virtual_packages: Sequence[VirtualPackage],
    *,
    cache_dir: str | None = None,
) -> SolveResult:
    """Solve `specs` for `platform`; unsatisfiable specs are bad input quoting rattler, unreachable
    channels an operational failure."""
    import rattler

    sources = expand_channels(channels, specs)
    if not sources:
        raise BadInputError(
            "no channels to solve against; add `channels:` to the environment.yml or pass -c CHANNEL"
        )
    match_specs = [rattler.MatchSpec(s, strict=False) for s in specs]
    virtual = [
        rattler.GenericVirtualPackage(
            rattler.PackageName(v.name), rattler.Version(v.version), rattler.BuildString(v.build)
        )
        for v in virtual_packages
    ]
    gateway = rattler.Gateway(cache_dir=Path(cache_dir)) if cache_dir else None

    async def run() -> list[Any]:
        result: list[Any] = await rattler.solve(
            [rattler.Channel(c) for c in sources],
            match_specs,
            gateway=gateway,
            platforms=[rattler.Subdir(platform), rattler.Subdir("noarch")],
            virtual_packages=virtual,
        )
        return result

    try:
        records = asyncio.run(run())
    except Exception as exc:
        raise _solve_error(exc, platform, sources) from exc
    packages = tuple(record_to_package(r) for r in records)
    return SolveResult(platform=platform, packages=packages, records=tuple(records))


def _solve_error(exc: Exception, platform: str, sources: list[str]) -> Exception:
    kind = exc.__class__.__name__
    lines = [ln.strip(" │├└─") for ln in str(exc).splitlines() if ln.strip(" │├└─")]
    detail = "; ".join(lines[:3]) if lines else kind
    shown = ", ".join(strip_credentials(s) for s in sources)
    if kind == "SolverError":
        return BadInputError(f"cannot solve for {platform}: {detail}; relax the specs or add a channel")
    return OperationalError(
        f"cannot read channels ({shown}) for {platform}: {detail}; check the URLs or the network"
    )


def record_to_package(record: Any) -> Package:
    """A rattler RepoDataRecord (or PrefixRecord) as an envguard Package."""
    url = strip_credentials(str(record.url))
    channel, subdir = channel_from_url(url)
    md5 = record.md5.hex() if record.md5 else ""
    sha256 = record.sha256.hex() if record.sha256 else ""
    return Package(
        manager="conda",
        name=record.name.normalized,
        version=str(record.version),
        build=str(record.build),
        build_number=int(record.build_number),
        channel=channel or normalize(strip_credentials(str(record.channel or ""))),
        subdir=str(record.subdir or subdir),
        url=url,
        md5=md5,
        sha256=sha256,
        depends=tuple(record.depends or ()),
    )
