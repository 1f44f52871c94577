"""The one locked-install path, shared by `create --lock` and `verify`: fetch every archive the lock names
(package cache, file:// channel, or download), prove each against the lock's sha256 (else md5), and only then
link the conda packages with rattler and install the pip ones with pip. A mismatch never reaches a prefix.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.cache import cache_dir
from envguard.engine import archives
from envguard.engine.archives import Archive
from envguard.engine.cachecheck import check_and_heal
from envguard.engine.pip_install import check_local_sources, install_locked_wheels
from envguard.engine.pipengine import PipEngine
from envguard.errors import BackendError, BadInputError
from envguard.model import LOCAL_ORIGIN, Package
from envguard.output import progress_bar
from envguard.process import one_line

# Work a caller hands the engine to start once the engine runs on its own (see Backend.install).
Alongside = Callable[[], object] | None


def default_pkgs_dir() -> Path:
    """Where envguard caches packages: `$ENVGUARD_PKGS_DIR`, else envguard's cache dir /pkgs."""
    explicit = os.environ.get("ENVGUARD_PKGS_DIR")
    return Path(explicit) if explicit else cache_dir() / "pkgs"


@dataclass(frozen=True)
class Fetched:
    """Every archive of a locked package set, hashed; `mismatches` did not match the lock."""

    packages: tuple[Package, ...]
    archives: tuple[Archive, ...]

    @property
    def mismatches(self) -> tuple[Archive, ...]:
        return tuple(a for a in self.archives if not a.verified)

    @property
    def md5_only(self) -> tuple[Archive, ...]:
        return tuple(a for a in self.archives if a.verified and a.algorithm != "sha256")


def fetch(packages: Sequence[Package], pkgs_dir: Path, *, progress: bool = False) -> Fetched:
    """Locate or download every archive (conda packages; pip packages locked with a file URL and hash),
    hashed, and make sure every local project folder a pip package installs from is there; with
    `progress`, a bar on stderr counts the archives."""
    for package in packages:  # every reader checks this; a snapshot or a caller's own list is checked here
        problem = package.identity_problem()
        if problem is not None:
            raise BadInputError(
                f"{problem}; refusing to install it (re-create the lock); nothing was installed"
            )
    local = [p.name for p in packages if p.origin is not None and p.origin.url == LOCAL_ORIGIN]
    if local:
        raise BadInputError(
            f"pip package(s) {', '.join(local)} were installed from a local path that the lock does not "
            "record; re-lock with `envguard lock --include-local`, or drop them from the lock and install "
            "them yourself"
        )
    check_local_sources(packages)
    total = sum(1 for p in packages if p.manager == "conda" or archives.has_archive(p))
    with progress_bar("fetching and hashing archives", total, progress) as advance:
        found = archives.fetch(packages, pkgs_dir, done=advance if progress else None)
    return Fetched(tuple(packages), tuple(found))


def install(
    fetched: Fetched,
    prefix: Path,
    *,
    specs: Sequence[str],
    platform: str | None,
    pkgs_dir: Path,
    progress: bool | None = None,
    cache_checked: bool = False,
    alongside: Alongside = None,
    engine: PipEngine | None = None,
) -> list[str]:
    """Link the verified conda archives into `prefix`, then install the pip packages (with `engine`, else
    pipengine.select()'s); returns warnings.
    Refuses (BackendError, nothing installed) when any archive does not match the lock. The package cache is
    checked against the archives first, unless the caller just did (`cache_checked`: verify reports it).
    `alongside`: see `link`."""
    if fetched.mismatches:
        raise BackendError(integrity_message(fetched.mismatches))
    conda = [a for a in fetched.archives if a.package.manager == "conda"]
    healed = [] if cache_checked else verify_cache(fetched, pkgs_dir)
    warnings = [f"{p.describe()}; removed it, re-extracted" for p in healed]
    if conda:
        link(
            archives.records(conda),
            prefix,
            specs,
            platform=platform,
            pkgs_dir=pkgs_dir,
            progress=progress,
            alongside=alongside,
        )
        archives.restore_urls(prefix, conda)
    elif alongside is not None:  # nothing to link: pip installs next, in another process
        alongside()
    pip = [p for p in fetched.packages if p.manager == "pip"]
    if not pip:
        return warnings

    wheels = [a for a in fetched.archives if a.package.manager == "pip"]
    others = [p for p in pip if not archives.has_archive(p)]
    return warnings + install_locked_wheels(prefix, wheels, others, pkgs_dir, engine)


def verify_cache(fetched: Fetched, pkgs_dir: Path) -> list[Any]:
    """Extracted package-cache folders that differ from their verified archives (removed, so they are
    re-extracted and never linked as they were); see envguard.engine.cachecheck."""
    return list(check_and_heal(fetched.archives, pkgs_dir))


def install_locked(
    packages: Sequence[Package],
    prefix: Path,
    *,
    specs: Sequence[str],
    platform: str | None,
    pkgs_dir: Path,
    progress: bool | None = None,
    alongside: Alongside = None,
) -> list[str]:
    """fetch() then install(): the whole locked install in one call (with `progress`, or on a terminal when
    it is None, a bar counts the archives fetched and hashed, another the packages linked)."""
    fetched = fetch(packages, pkgs_dir, progress=sys.stderr.isatty() if progress is None else progress)
    return install(
        fetched,
        prefix,
        specs=specs,
        platform=platform,
        pkgs_dir=pkgs_dir,
        progress=progress,
        alongside=alongside,
    )


def link(
    records: Sequence[Any],
    prefix: Path,
    specs: Sequence[str],
    *,
    platform: str | None,
    pkgs_dir: Path,
    progress: bool | None = None,
    client: Any = None,
    alongside: Alongside = None,
    installed: Sequence[Any] | None = None,
    reinstall: Collection[str] = (),
) -> None:
    """rattler.install into `prefix` with the package cache, requested specs and (on a terminal) a progress
    bar; `client` (engine.solver.client) downloads from channels that need credentials. `alongside` is
    called just before the engine starts linking: work for other threads to start then, when this thread
    stops needing the GIL (rattler links without it), rather than compete with the Python work before.

    `installed`: the prefix's own records (rattler PrefixRecords), given so that only the transaction between
    them and `records` is linked and unlinked (an unchanged package is one of `installed` itself in
    `records`); `reinstall`: names linked again even where the installed record has the same content."""
    import asyncio  # runs rattler's coroutine; with ssl and socket, nothing a pip-only sync needs

    import rattler

    target = rattler.Subdir(platform) if platform else None
    requested = [rattler.MatchSpec(s, strict=False)._match_spec for s in specs if not s.startswith("__")]
    shown = sys.stderr.isatty() if progress is None else progress
    reporter = _progress_reporter(len(records)) if shown else None

    async def run() -> None:
        await rattler.install(
            list(records),
            prefix,
            cache_dir=pkgs_dir,
            show_progress=False,
            platform=target,
            requested_specs=requested,
            reporter=reporter,
            client=client,
            installed_packages=None if installed is None else list(installed),
            reinstall_packages=set(reinstall) or None,
        )

    for leftover in link_leftovers(prefix):  # a killed install's (the caller holds the prefix's lock)
        with contextlib.suppress(OSError):
            leftover.unlink()
    tag = prefix / "CACHEDIR.TAG"
    had_tag = tag.exists()
    if alongside is not None:
        alongside()
    try:
        asyncio.run(run())
    except Exception as exc:  # rattler raises its own exception types
        raise BackendError(
            f"embedded engine (py-rattler) could not install into {prefix}: "
            f"{engine_reason(exc)}; check disk space and the package cache {pkgs_dir}"
        ) from exc
    except BaseException as exc:  # a Rust panic outside rayon's threads is pyo3's PanicException
        if type(exc).__name__ != "PanicException":
            raise
        raise BackendError(
            f"embedded engine (py-rattler) crashed while installing into {prefix} (a Rust panic: "
            f"{engine_reason(exc)}); nothing was kept. A broken or hostile package, or a bug in rattler"
        ) from None
    finally:
        if reporter is not None:
            reporter.close()
    if not had_tag:  # rattler tags the prefix as a cache: `tar --exclude-caches` would skip the environment
        with contextlib.suppress(OSError):
            tag.unlink(missing_ok=True)


_TEMP_RECORD = "prefix_record_"  # rattler writes each record to a temp file of this name, then renames it
_SYMLINK_PROBE = re.compile(r"symtest_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def link_leftovers(prefix: Path) -> list[Path]:
    """What a rattler install killed midway leaves in `prefix` and no finished one does: its temporary records
    (`conda-meta/prefix_record_*`, never a record: those end in .json) and the link it probes symlink support
    with (`symtest_UUID`). (Its CACHEDIR.TAG stays after any install; `link` removes it where it was not
    there before, and envguard.sync.leftovers after a killed sync.)"""
    meta = prefix / "conda-meta"
    found = [meta / n for n in _names(meta) if n.startswith(_TEMP_RECORD) and not n.endswith(".json")]
    return found + [prefix / n for n in _names(prefix) if _SYMLINK_PROBE.fullmatch(n)]


def _names(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def engine_reason(exc: BaseException) -> str:
    """rattler's error chain ("failed to link X", "Caused by: ...", ...) as one line: what failed and the
    innermost cause (No space left on device, Permission denied), which the middle would crowd out."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
    first, last = lines[0], lines[-1].removeprefix("Caused by:").strip()
    return one_line(first if last in first else f"{first}: {last}", 400)


def integrity_message(bad: Sequence[Archive]) -> str:
    """One line naming the packages whose archives do not match, and where the first one was found."""
    names = ", ".join(f"{a.package.name} {a.package.version} {a.package.build}" for a in bad[:5])
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    first = bad[0]
    return (
        f"{first.algorithm} of {names}{more} does not match ({first.expected[:12]}... expected, "
        f"{first.actual[:12]}... found in {first.path}); the channel or cache was altered — nothing was "
        "installed"
    )


class _Progress:
    """A rich progress bar fed by rattler's InstallerReporter callbacks (duck-typed)."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("linking"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._bar.add_task("link", total=total)
        self._bar.start()

    def on_transaction_start(self, total_operations: int) -> None:
        self._bar.update(self._task, total=total_operations)

    def on_transaction_operation_complete(self, operation: int) -> None:
        self._bar.advance(self._task)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):
            return lambda *args: 0
        raise AttributeError(name)

    def close(self) -> None:
        self._bar.stop()


def _progress_reporter(total: int) -> _Progress:
    return _Progress(total)
