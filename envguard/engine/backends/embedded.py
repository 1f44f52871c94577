"""The embedded conda engine: py-rattler solves and links real, conda-compatible prefixes; no conda needed.

conda compatibility: rattler writes `conda-meta/*.json` records (with `requested_specs`); envguard adds a
conda-style `conda-meta/history` block with `# update specs: [...]` so `conda list --revisions`,
`conda env export --from-history` and envguard's own readers see what the user asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envguard import __version__
from envguard.channels import strip_credentials
from envguard.engine.backends.base import Backend, Plan, Request, one_line, redact
from envguard.errors import BackendError, BadInputError, EnvguardError
from envguard.model import Package


def default_pkgs_dir() -> Path:
    """Where the embedded engine caches packages: `$ENVGUARD_PKGS_DIR`, else envguard's cache dir /pkgs."""
    import os

    from envguard.cache import cache_dir

    explicit = os.environ.get("ENVGUARD_PKGS_DIR")
    return Path(explicit) if explicit else cache_dir() / "pkgs"


class EmbeddedBackend(Backend):
    """py-rattler solve + install with a package cache and a progress bar on a terminal."""

    name = "embedded"

    def __init__(self, pkgs_dir: Path | None = None, *, progress: bool | None = None) -> None:
        self.pkgs_dir = pkgs_dir or default_pkgs_dir()
        self.progress = sys.stderr.isatty() if progress is None else progress

    def describe(self) -> str:
        return f"embedded (py-rattler {_rattler_version()})"

    def solve(self, request: Request) -> Plan:
        if request.locked:
            return Plan(request.platform, tuple(p for p in request.locked if p.manager == "conda"))
        try:
            return self._solve(request)
        except EnvguardError as exc:  # the engine's message may quote channel URLs
            raise type(exc)(redact(str(exc))) from exc

    def _solve(self, request: Request) -> Plan:
        from envguard.engine.solver import solve

        if not any(strip_credentials(c) != c for c in request.channels):
            result = solve(request.specs, request.channels, request.platform, request.virtual_packages)
            return Plan(result.platform, result.packages, result.records)
        # rattler's repodata cache records channel URLs verbatim: keep a token's cache private to this run
        with tempfile.TemporaryDirectory(prefix="envguard-repodata-") as private:
            result = solve(
                request.specs, request.channels, request.platform, request.virtual_packages, cache_dir=private
            )
        return Plan(result.platform, result.packages, result.records)

    def install(self, prefix: Path, request: Request, plan: Plan | None = None) -> Plan:
        """Link the plan (solving first when none is given) into `prefix`; locked requests are installed from
        archives whose hashes are checked against the lock first."""
        from envguard.engine import archives

        if request.locked:
            packages = tuple(p for p in request.locked if p.manager == "conda")
            fetched = archives.fetch(packages, self.pkgs_dir)
            bad = [a for a in fetched if not a.verified]
            if bad:
                raise BackendError(integrity_message(bad))
            self.link(archives.records(fetched), prefix, request.specs, request.platform)
            archives.restore_urls(prefix, fetched)
        else:
            plan = plan if plan is not None and plan.native else self.solve(request)
            packages = plan.packages
            verify_local_archives(packages)
            self.link(list(plan.native), prefix, request.specs, request.platform)
        if any(strip_credentials(c) != c for c in request.channels):
            scrub_credentials(prefix)
        write_history(prefix, request.specs, packages)
        return Plan(request.platform, packages)

    def link(
        self, records: Sequence[Any], prefix: Path, specs: Sequence[str], platform: str | None = None
    ) -> None:
        """rattler.install into `prefix` with the package cache, requested specs and (on a terminal)
        progress."""
        import rattler

        target = rattler.Subdir(platform) if platform else None
        requested = [rattler.MatchSpec(s, strict=False)._match_spec for s in specs if not s.startswith("__")]
        reporter = _progress_reporter(len(records)) if self.progress else None

        async def run() -> None:
            await rattler.install(
                list(records),
                prefix,
                cache_dir=self.pkgs_dir,
                show_progress=False,
                platform=target,
                requested_specs=requested,
                reporter=reporter,
            )

        tag = prefix / "CACHEDIR.TAG"
        had_tag = tag.exists()
        try:
            asyncio.run(run())
            if (
                not had_tag
            ):  # rattler tags the prefix as a cache: `tar --exclude-caches` would skip the environment
                tag.unlink(missing_ok=True)
        except Exception as exc:  # rattler raises its own exception types
            raise BackendError(
                f"embedded engine (py-rattler) could not install into {prefix}: "
                f"{one_line(str(exc))}; check disk space and the package cache {self.pkgs_dir}"
            ) from exc
        finally:
            if reporter is not None:
                reporter.close()
        if (
            not had_tag
        ):  # rattler tags the prefix as a cache: `tar --exclude-caches` would skip the environment
            with contextlib.suppress(OSError):
                tag.unlink(missing_ok=True)

    def remove(self, prefix: Path) -> None:
        if not (prefix / "conda-meta").is_dir():
            raise BadInputError(f"{prefix}: not a conda environment (no conda-meta/); refusing to delete it")
        try:
            shutil.rmtree(prefix)
        except OSError as exc:
            raise BackendError(
                f"embedded engine could not remove {prefix} ({exc.strerror}); delete it by hand"
            ) from exc

    def list(self, prefix: Path) -> tuple[Package, ...]:
        from envguard.prefix.records import iter_records, record_to_package

        return tuple(record_to_package(record) for _path, record in iter_records(prefix))


def verify_local_archives(packages: Sequence[Package]) -> None:
    """Hash archives that come from file:// channels (rattler does not) against the repodata's sha256."""
    from envguard.engine import archives

    local = [p for p in packages if archives.local_path(p.url) is not None and (p.sha256 or p.md5)]
    bad = [a for a in archives.fetch(local, None) if not a.verified]
    if bad:
        raise BackendError(integrity_message(bad))


def integrity_message(bad: Sequence[Any]) -> str:
    names = ", ".join(f"{a.package.name} {a.package.version} {a.package.build}" for a in bad[:5])
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    first = bad[0]
    return (
        f"{first.algorithm} of {names}{more} does not match ({first.expected[:12]}... expected, "
        f"{first.actual[:12]}... found in {first.path}); the channel or cache was altered — nothing was "
        "installed"
    )


def scrub_credentials(prefix: Path) -> None:
    """Remove user:password@ and /t/<token>/ from the url/channel fields rattler wrote into conda-meta."""
    import json

    from envguard.atomic import write_text

    for path in sorted((prefix / "conda-meta").glob("*.json")):
        data = json.loads(path.read_bytes())
        clean = {k: strip_credentials(str(data[k])) for k in ("url", "channel") if data.get(k)}
        if any(data[k] != v for k, v in clean.items()):
            write_text(path, json.dumps({**data, **clean}, indent=2) + "\n")


def write_history(prefix: Path, specs: Sequence[str], packages: Sequence[Package]) -> None:
    """Append a conda-style revision (`+channel/subdir::name-version-build`, `# update specs: [...]`)."""
    from envguard.atomic import write_text

    path = prefix / "conda-meta" / "history"
    try:
        old = path.read_text(encoding="utf-8")
    except OSError:
        old = ""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    lines = [
        f"==> {stamp} <==",
        f"# cmd: {redact(' '.join(['envguard', *sys.argv[1:]]))}",
        f"# envguard version: {__version__}",
    ]
    for package in sorted(packages, key=lambda p: p.name):
        channel = strip_credentials(package.url).rsplit("/", 1)[0] if package.url else package.channel
        lines.append(f"+{channel}::{package.name}-{package.version}-{package.build}")
    lines.append(f"# update specs: {list(specs)!r}")
    write_text(path, old + "\n".join(lines) + "\n")


def _rattler_version() -> str:
    import rattler

    return str(getattr(rattler, "__version__", "unknown"))


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
