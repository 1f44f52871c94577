"""Solve conda specs with py-rattler (the engine behind pixi) for one platform, offline-capable with file://
channels.

Used by `lock -f environment.yml`, `create` and `verify`. Virtual packages are always explicit: the caller
says whether the target has a GPU (`__cuda`) — nothing is silently assumed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.channels import expand_channels, strip_credentials
from envguard.errors import BadInputError, OperationalError
from envguard.model import Package, VirtualPackage
from envguard.prefix.records import rattler_to_package


@dataclass(frozen=True)
class SolveResult:
    """Solved packages for one platform; `records` are rattler RepoDataRecords ready for `install`."""

    platform: str
    packages: tuple[Package, ...]
    records: tuple[Any, ...]


def solve(
    specs: Sequence[str],
    channels: Sequence[str],
    platform: str,
    virtual_packages: Sequence[VirtualPackage],
    *,
    cache_dir: str | None = None,
    gateway: Any = None,
) -> SolveResult:
    """Solve `specs` for `platform`; unsatisfiable specs are bad input quoting rattler, unreachable
    channels an operational failure. `gateway` (from `new_gateway`) shares fetched repodata between the
    solves of one lock (each platform's noarch subdir and the channel index are read once)."""
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
    if gateway is None:
        gateway = new_gateway(cache_dir)

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
        raise _solve_error(exc, platform, sources, virtual_packages) from exc
    packages = tuple(rattler_to_package(r) for r in records)
    return SolveResult(platform=platform, packages=packages, records=tuple(records))


def new_gateway(cache_dir: str | None = None) -> Any:
    """A rattler Gateway: one per lock or create, shared by its per-platform solves."""
    import rattler

    return rattler.Gateway(cache_dir=Path(cache_dir)) if cache_dir else rattler.Gateway()


_DETAIL_LIMIT = 1500


def _solve_error(
    exc: Exception, platform: str, sources: list[str], virtual_packages: Sequence[VirtualPackage] = ()
) -> Exception:
    """rattler's whole explanation on one line (the root cause is often its last line), naming the virtual
    packages the solve needs that this platform was not given, and what to pass."""
    import re

    kind = exc.__class__.__name__
    text = str(exc)
    lines = list(dict.fromkeys(ln.strip(" │├└─") for ln in text.splitlines() if ln.strip(" │├└─")))
    detail = "; ".join(lines) if lines else kind
    if len(detail) > _DETAIL_LIMIT:
        detail = detail[: _DETAIL_LIMIT - 3] + "..."
    shown = ", ".join(strip_credentials(s) for s in sources)
    if kind == "SolverError":
        given = {v.name for v in virtual_packages}
        needed = sorted(set(re.findall(r"(?<![\w-])(__[a-z][a-z0-9_]*)", text)) - given)
        hint = ""
        if needed:
            hint = f"; it needs the virtual package(s) {', '.join(needed)}, which {platform} was not given"
            if "__cuda" in needed:
                hint += " (for GPU machines: --cuda VERSION or CONDA_OVERRIDE_CUDA=VERSION; else a CPU build)"
        return BadInputError(f"cannot solve for {platform}: {detail}{hint}; relax the specs or add a channel")
    return OperationalError(
        f"cannot read channels ({shown}) for {platform}: {detail}; check the URLs or the network"
    )
