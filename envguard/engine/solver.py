"""Solve conda specs with py-rattler (the engine behind pixi) for one platform, offline-capable with file://
channels.

Used by `lock -f environment.yml`, `create` and `verify`. Virtual packages are always explicit: the caller
says whether the target has a GPU (`__cuda`) — nothing is silently assumed.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.channels import (
    aliased,
    check_platform,
    expand_channels,
    remember,
    remembered,
    strip_credentials,
    user_auth_entries,
)
from envguard.errors import BadInputError, OperationalError
from envguard.model import Package, VirtualPackage
from envguard.prefix.condaconfig import channel_alias
from envguard.prefix.records import rattler_to_package


@dataclass(frozen=True)
class SolveResult:
    """Solved packages for one platform; `records` are rattler RepoDataRecords ready for `install`."""

    platform: str
    packages: tuple[Package, ...]
    records: tuple[Any, ...]
    undated: tuple[str, ...] = ()  # with exclude_newer: solved packages whose records carry no timestamp


def solve(
    specs: Sequence[str],
    channels: Sequence[str],
    platform: str,
    virtual_packages: Sequence[VirtualPackage],
    *,
    cache_dir: str | None = None,
    gateway: Any = None,
    exclude_newer: datetime.datetime | None = None,
) -> SolveResult:
    """Solve `specs` for `platform`; unsatisfiable specs are bad input quoting rattler, unreachable
    channels an operational failure. `gateway` (from `new_gateway`) shares fetched repodata between the
    solves of one lock (each platform's noarch subdir and the channel index are read once).
    `exclude_newer` (UTC): solve as of that moment, leaving out every record published later; a record
    without a timestamp cannot be dated, so it stays a candidate and is named in `undated` when solved."""
    import asyncio  # runs rattler's coroutines; with ssl and socket, nothing a command without a solve needs

    import rattler

    check_platform(platform)
    known = remembered()
    specs = [_spec_without_credential(s) for s in specs]
    alias = channel_alias()  # a condarc's mirror of anaconda.org for bare channel names
    sources = [remember(aliased(c, alias)) for c in expand_channels(channels, specs)]
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
    if gateway is None or remembered() != known:  # a credential this gateway's client does not have
        gateway = new_gateway(cache_dir)

    async def run(through: Any) -> list[Any]:
        result: list[Any] = await rattler.solve(
            [rattler.Channel(c) for c in sources],
            match_specs,
            gateway=through,
            platforms=[rattler.Subdir(platform), rattler.Subdir("noarch")],
            virtual_packages=virtual,
            exclude_newer=exclude_newer,
            timestamp_policy="allow-missing",
        )
        return result

    try:
        try:
            records = asyncio.run(run(gateway))
        except Exception as exc:
            if "unexpected status code (304" not in str(exc):
                raise
            # py-rattler 0.28 fails when a server answers 304 Not Modified while it revalidates a cached
            # sharded index; the plain repodata.json path handles 304, so read that instead
            records = asyncio.run(run(new_gateway(cache_dir, sharded=False)))
    except Exception as exc:
        raise _solve_error(exc, platform, sources, virtual_packages) from exc
    packages = tuple(rattler_to_package(r) for r in records)
    undated = tuple(sorted(r.name.normalized for r in records if _undated(r))) if exclude_newer else ()
    return SolveResult(platform=platform, packages=packages, records=tuple(records), undated=undated)


def _undated(record: Any) -> bool:
    """Neither the channel's index time nor the build's timestamp: the date cannot apply to it."""
    return record.timestamp is None and getattr(record, "indexed_timestamp", None) is None


def parse_date(text: str) -> datetime.datetime:
    """`--exclude-newer DATE`: `2024-06-01` (midnight UTC at its start) or an RFC 3339 time
    (`2024-06-01T12:00:00Z`, `...+02:00`), as a UTC datetime; anything else is bad input."""
    value = text.strip()
    try:
        if len(value) == 10:
            day = datetime.date.fromisoformat(value)
            return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.timezone.utc)
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise BadInputError(
            f"--exclude-newer {text!r}: not a date; give YYYY-MM-DD or an RFC 3339 time "
            "(2024-06-01T12:00:00Z)"
        ) from exc
    if moment.tzinfo is None:
        raise BadInputError(f"--exclude-newer {text!r}: a time needs its zone (Z or +HH:MM)")
    return moment.astimezone(datetime.timezone.utc)


def format_date(moment: datetime.datetime) -> str:
    """The canonical text of an exclude-newer moment: `2024-06-01T00:00:00Z`."""
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_gateway(cache_dir: str | None = None, *, sharded: bool = True) -> Any:
    """A rattler Gateway: one per lock or create, shared by its per-platform solves; it authenticates with
    the channel credentials remembered so far (see `client`). `sharded=False` reads repodata.json only."""
    import rattler

    config = None if sharded else rattler.SourceConfig(sharded_enabled=False)
    return rattler.Gateway(
        cache_dir=Path(cache_dir) if cache_dir else None, client=client(), default_config=config
    )


def _spec_without_credential(spec: str) -> str:
    """`URL::name` with the URL's credential remembered and removed (rattler would cache the URL as given)."""
    if "::" not in spec or "://" not in spec.split("::", 1)[0]:
        return spec
    channel, rest = spec.split("::", 1)
    return f"{remember(channel.strip())}::{rest}"


def client() -> Any:
    """A rattler networking client (rattler's default middleware stack) that knows the remembered channel
    credentials, or None when there are none. They reach rattler's authentication storage through a
    RATTLER_AUTH_FILE that lives in memory (a memfd, Linux) and is read once while the client is built;
    the user's own RATTLER_AUTH_FILE entries are kept, envguard's win for the same host."""
    entries = auth_entries()
    return None if entries is None else client_with(entries)


def auth_entries() -> dict[str, Any] | None:
    """rattler authentication-storage entries for the remembered channel credentials (the user's own
    RATTLER_AUTH_FILE entries kept, envguard's winning for the same host), or None when there are none."""
    credentials = remembered()
    if not credentials:
        return None
    entries = user_auth_entries()
    entries.update({c.host: c.rattler_entry() for c in credentials})
    return entries


def client_with(entries: dict[str, Any]) -> Any:
    """A rattler networking client reading these authentication entries (from memory, never a file on
    disk where the OS has memfd)."""
    import json

    from rattler.networking import Client

    with _auth_file(json.dumps(entries).encode()):
        return Client.default_client()


@contextlib.contextmanager
def _auth_file(data: bytes) -> Iterator[None]:
    """RATTLER_AUTH_FILE set to a file holding `data` for the duration: an anonymous in-memory file where
    the OS has one, else a 0600 file in a private temp folder, removed on exit; the variable is restored."""
    import os
    import tempfile

    old = os.environ.get("RATTLER_AUTH_FILE")
    folder = None
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("envguard-auth")  # close-on-exec: no child process inherits it
        path = f"/proc/self/fd/{fd}"
    else:
        folder = tempfile.mkdtemp(prefix="envguard-auth-")
        path = os.path.join(folder, "auth.json")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.environ["RATTLER_AUTH_FILE"] = path
        yield
    finally:
        os.close(fd)
        if old is None:
            os.environ.pop("RATTLER_AUTH_FILE", None)
        else:
            os.environ["RATTLER_AUTH_FILE"] = old
        if folder is not None:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


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
