"""Run a full `envguard check`: read the target and the live environment, compare, add file integrity, RNG and
lock freshness findings. The only part of check that touches the world; the comparison itself is pure
(envguard.check.report, envguard.check.freshness)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from envguard import sources
from envguard.cache import checks as statcache
from envguard.cache import parsed as parsecache
from envguard.check import fast, render
from envguard.check.discovery import find_lock
from envguard.check.fixes import fix_commands
from envguard.check.report import CheckReport, check_environment
from envguard.cuda import family_warnings
from envguard.diff import Difference
from envguard.errors import EXIT_DRIFT, EXIT_OK, UsageError
from envguard.formats import read_file
from envguard.model import Environment
from envguard.sources import Source, resolve
from envguard.textio import read_bytes


@dataclass(frozen=True)
class CheckOptions:
    """Everything `envguard check` was asked."""

    source: str | None = None
    lock: str | None = None
    envfile: str | None = None
    platform: str | None = None
    rng: bool = False
    files: bool = False
    lock_fresh: bool = False
    style: str = "human"  # which stored output a cached answer gives
    no_cache: bool = False
    looked_up: bool = False  # the caller looked the stored answer up already, and missed


@dataclass(frozen=True)
class Checked:
    """A check's answer: the report of a full check, or (`report` None) the stored output of the last clean
    full check of an environment unchanged since."""

    report: CheckReport | None
    cached: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.report is None or self.report.clean else EXIT_DRIFT


def check(options: CheckOptions) -> Checked:
    """The whole command: the cached answer if nothing changed, else the full check (stored when clean)."""
    o = options
    if o.lock_fresh:
        if o.source or o.rng or o.files:
            raise UsageError("--lock-fresh checks files only; drop SOURCE, --rng and --files")
        from envguard.check import freshness  # conda-lock's reader and writer: for -f with a lock alone

        return Checked(
            freshness.lock_fresh_report(
                Path(o.lock) if o.lock else None, Path(o.envfile) if o.envfile else None
            )
        )
    lock = Path(o.lock) if o.lock else None
    if lock is None and o.envfile is None:
        lock = find_lock(source=o.source)
    inputs = [str(p) for p in (lock, o.envfile) if p is not None]
    cacheable = not (o.rng or o.files or o.no_cache)
    source = resolve(o.source)  # once: `name:ENV` reads every condarc, a file is sniffed for its kind
    if cacheable and not o.looked_up and source.live:
        cached = fast.lookup(str(source.path), inputs, o.platform, o.style)
        if cached is not None:
            return Checked(None, cached)
    envfile = Path(o.envfile) if o.envfile else None
    outcome = run_check(source, lock, envfile, platform=o.platform, rng=o.rng, files=o.files)
    if cacheable and outcome.fingerprint is not None:
        stored = render.all_styles(outcome.report, cached=True)
        fast.remember(
            str(outcome.prefix), inputs, o.platform, outcome.fingerprint, outcome.report.clean, stored
        )
    return Checked(outcome.report)


@dataclass(frozen=True)
class CheckOutcome:
    """The report plus what the fast-path cache needs: the prefix and its stat fingerprint (None for a
    file); and the two environments compared (sync plans from them)."""

    report: CheckReport
    prefix: Path
    fingerprint: str | None
    live: Environment | None = None
    target: Environment | None = None


def run_check(
    source: Source,
    lock: Path | None,
    envfile: Path | None,
    *,
    platform: str | None,
    rng: bool,
    files: bool,
) -> CheckOutcome:
    """Check SOURCE against the lock (exact) and/or environment.yml (satisfaction; with a lock: freshness)."""
    if not source.live and (rng or files):
        raise UsageError(f"{source.label}: --rng and --files need a live environment, not a file")
    if rng and lock is None:
        raise UsageError("--rng compares with the fingerprints a lock recorded; pass --lock (or drop -f)")
    prefix = source.path
    # taken before anything is read: the verdict is stored under it (a change racing the read never hits)
    fingerprint = statcache.stat_fingerprint(prefix) if source.live else None
    live = sources.load(source)
    warnings = [
        *live.warnings,
        *(_interrupted(prefix) if source.live else ()),
        *family_warnings(live.packages),
    ]
    wanted = platform or live.platform
    target: Environment | None = None
    if lock is not None:
        target = parse_target(lock, wanted)
        warnings += target.warnings  # on every check, not only the one that parsed it
        if rng:
            live = _probed(live, target, prefix)
        report = check_environment(live, target, rng=rng)
        if envfile is not None:
            from envguard.check import freshness  # as above

            report = report.merged(*freshness.lock_freshness(lock, envfile))
    else:
        assert envfile is not None

        from envguard.formats import envyml  # -f without a lock: the only path that reads environment.yml

        target = envyml.read(envfile, platform=wanted)
        report = check_environment(live, target)
    if files:
        from envguard.check.files import file_findings  # the hashing thread pool: for --files alone

        report = with_files(report, *file_findings(prefix), live, target)
    report = dataclasses.replace(report, warnings=tuple(dict.fromkeys(warnings)))
    return CheckOutcome(report, prefix, fingerprint, live, target)


def with_files(
    report: CheckReport,
    findings: list[Difference],
    notes: list[str],
    reinstall: list[str],
    live: Environment,
    target: Environment,
) -> CheckReport:
    """The report with `--files`' findings, and its fix lines made again from every finding (the sync line
    gains `--files`); the lock-freshness line, when there is one, stays last."""
    before = fix_commands(live, target, report.findings)
    merged = report.merged(findings, notes)
    others = [f for f in report.fixes if f not in before]
    return dataclasses.replace(
        merged, fixes=tuple(dict.fromkeys((*fix_commands(live, target, merged.findings, reinstall), *others)))
    )


def _probed(live: Environment, target: Environment, prefix: Path) -> Environment:
    """LIVE with freshly measured fingerprints; first make sure the target has recorded ones to compare
    with."""
    if target.fingerprints is None:
        check_environment(live, target, rng=True)  # raises the one-line "needs recorded fingerprints" error
    from envguard.prefix.probe import run_probe  # --rng alone: subprocess and signals

    return dataclasses.replace(live, fingerprints=run_probe(prefix))


def parse_target(path: Path, platform: str | None) -> Environment:
    """A lock or other resolved file, parsed once per exact content (the parse is cached as JSON); its
    warnings stay in `env.warnings`, for the report that reads it."""
    try:
        data = read_bytes(path)  # O_NONBLOCK: a FIFO is bad input at once, not a hang
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such lock file; create it with `envguard lock` or fix --lock") from exc
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})") from exc
    # named by its path: a snapshot's own `source` is the environment it was taken from; keyed by its folder
    # too: a project the lock records relative to itself is that folder's (envguard.formats.localsource)
    key = f"target\0{platform}\0{os.path.dirname(os.path.abspath(path))}"
    env = parsecache.parsed(data, key, str(path), lambda: read_file(path, platform=platform))
    return dataclasses.replace(env, source=str(path))


def _interrupted(prefix: Path) -> tuple[str, ...]:
    """One line when a killed create or sync left the environment mid-change (its journal lies beside it)."""
    if not os.path.lexists(prefix.with_name(f".{prefix.name}.envguard-journal")):  # = target.journal_path
        return ()
    # lazy: the target lock's module (its dataclasses, shutil, signal) costs the full check ~5 ms of ~85
    from envguard.engine import target as targets

    left = targets.interrupted(prefix)
    return (left,) if left else ()
