"""`envguard sync` logic: repair an environment in place so it equals its lock, touching only what differs.

`prepare` reads the environment and the lock and plans (envguard.sync.plan) from what check finds (an
environment in sync and unchanged since is answered before any of this, by envguard.sync.fast). `apply`
proves every archive the plan installs against the lock before anything is touched (as verify does), then
runs the conda transaction through the backend `create` would choose (rattler's installer
given the installed records, or conda/mamba/micromamba), then pip in the environment, records the lock the
environment now follows (envguard.prefix.lockref) and checks the result.

A failure or Ctrl-C midway leaves an environment each of whose packages is either the old one or the locked
one: the next `sync` plans what is left (and `check` lists it).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from envguard import sources
from envguard.cache.statsig import stat_fingerprint
from envguard.check import (
    CheckOutcome,
    CheckReport,
    check_environment,
    fast,
    file_findings,
    find_lock,
    run_check,
)
from envguard.check import render as check_render
from envguard.engine import backends, pipengine
from envguard.engine import target as targets
from envguard.engine.archives import has_archive
from envguard.engine.backends.base import Backend, Change
from envguard.engine.cacheuse import using_cache
from envguard.engine.install import Fetched, default_pkgs_dir, fetch, install, integrity_message
from envguard.engine.pip_install import install_unhashed, uninstall
from envguard.errors import BackendError, BadInputError, EnvguardError, OperationalError
from envguard.model import Environment
from envguard.output import warn
from envguard.prefix import lockref
from envguard.prefix.integrity import verify_files
from envguard.prefix.records import torn_records
from envguard.process import sigterm_as_interrupt
from envguard.sync import leftovers
from envguard.sync.plan import (
    SyncPlan,
    plan_sync,
    refuse_own,
    reinstall_targets,
    requested_changes,
)
from envguard.sync.timings import Stopwatch, Timing


@dataclass(frozen=True)
class SyncOptions:
    """Everything `envguard sync` was asked."""

    source: str | None = None
    lock: str | None = None
    backend: str | None = None
    files: bool = False
    pkgs_dir: Path | None = None
    progress: bool = False
    allow_self: bool = False  # change the environment envguard runs from (else ENVGUARD_ALLOW_SELF=1)
    dry_run: bool = False  # plan only: a torn record is reported, not removed


@dataclass(frozen=True)
class Prepared:
    """A plan and what applying it needs: the environment and the lock as read."""

    plan: SyncPlan
    lock: Path
    live: Environment
    target: Environment
    fingerprint: str | None = None  # the environment's stat fingerprint when it was read (None: unknown)
    warnings: tuple[str, ...] = ()  # what check said reading them
    timings: tuple[Timing, ...] = ()  # reading and planning


@dataclass(frozen=True)
class SyncResult:
    """What a sync planned and did: `applied` once the plan ran; `after` is check's report of the result."""

    plan: SyncPlan
    backend: str = ""
    dry_run: bool = False
    applied: bool = False
    declined: bool = False
    after: CheckReport | None = None
    warnings: tuple[str, ...] = ()
    timings: tuple[Timing, ...] = ()  # by stage, in the order they ran (`sync --timings`)

    @property
    def in_sync(self) -> bool:
        """The environment equals the lock now (nothing to do, or done and checked clean)."""
        if self.plan.empty:
            return True
        return self.applied and self.after is not None and self.after.clean


# the answers an in-sync environment gets (sync's renderer makes them), by envguard.sync.fast's style key
Answers = Callable[[SyncPlan], dict[str, str]]


def prepare(options: SyncOptions, answers: Answers | None = None) -> Prepared:
    """Read SOURCE (a live environment) and the lock and plan; nothing is changed. An environment found in
    sync gets its `answers` stored beside check's verdict (envguard.sync.fast): the next sync of it, while
    neither it nor the lock changes, reads nothing."""
    watch = Stopwatch()
    with watch.stage("read"):
        prefix, lock, outcome, repaired = _read(options)
        assert outcome.live is not None and outcome.target is not None
        problems = verify_files(prefix).problems if options.files else ()
        reinstall = reinstall_targets(p.package for p in problems)
    with watch.stage("plan"):
        plan = plan_sync(outcome.live, outcome.target, outcome.report.findings, reinstall)
        if outcome.fingerprint is not None and outcome.report.clean and plan.empty and not options.files:
            stored = {
                **check_render.all_styles(outcome.report, cached=True),
                **(answers(plan) if answers else {}),
            }
            fast.remember(str(prefix), [str(lock)], None, outcome.fingerprint, True, stored)
    warnings = (*repaired, *outcome.report.warnings)
    return Prepared(plan, lock, outcome.live, outcome.target, outcome.fingerprint, warnings, watch.timings)


def _read(options: SyncOptions) -> tuple[Path, Path, CheckOutcome, tuple[str, ...]]:
    """(prefix, lock, check's outcome of it against the lock, what was removed to read it: a killed sync's
    leftovers, torn records)."""
    source = sources.resolve(options.source)
    if not source.live:
        raise BadInputError(
            f"{source.label}: not an environment (a {source.kind or 'file'}); sync takes a prefix folder, "
            "name:ENV or nothing (the active environment), and the lock with --lock FILE"
        )
    prefix = source.path
    refuse_own(prefix, allowed=options.allow_self or os.environ.get(sources.ALLOW_SELF) == "1")
    lock = Path(options.lock) if options.lock else find_lock(instead="--lock FILE", source=options.source)
    left = () if options.dry_run else leftovers.remove(prefix)  # a killed sync's, before it is read
    try:
        return prefix, lock, run_check(source, lock, None, platform=None, rng=False, files=False), left
    except (BadInputError, OperationalError):
        repaired = _remove_torn(prefix, options.dry_run)
        if not repaired:
            raise
    outcome = run_check(source, lock, None, platform=None, rng=False, files=False)
    return prefix, lock, outcome, (*left, *repaired)


def _remove_torn(prefix: Path, dry_run: bool) -> tuple[str, ...]:
    """Remove the torn conda-meta records a write stopped midway left (a full disk, a kill), holding the
    environment's lock (so no other envguard is writing them): their packages are then missing, and the plan
    reinstalls them from the lock. What was removed, as warnings; () when none is torn."""
    with targets.hold(prefix):
        torn = torn_records(prefix)
        if torn and dry_run:
            names = ", ".join(p.name for p in torn)
            raise BadInputError(
                f"{prefix}: {len(torn)} torn conda-meta record(s) ({names}), left by an interrupted write; "
                "`envguard sync` without --dry-run reinstalls their packages from the lock"
            )
        for path in torn:
            path.unlink(missing_ok=True)
    return tuple(
        f"removed the torn conda-meta record {p.name} (an interrupted write); its package is reinstalled "
        "from the lock"
        for p in torn
    )


def unchanged(prepared: Prepared, *, dry_run: bool = False, declined: bool = False) -> SyncResult:
    """The result of a sync that changed nothing: in sync already (the environment is then recorded as
    following the lock, except by a dry run, which writes nothing), a dry run, or a plan the user declined."""
    if prepared.plan.empty and not dry_run:
        _remember(Path(prepared.plan.prefix), prepared.lock)
    return SyncResult(
        prepared.plan,
        dry_run=dry_run,
        declined=declined,
        warnings=prepared.warnings,
        timings=prepared.timings,
    )


def apply(prepared: Prepared, options: SyncOptions) -> SyncResult:
    """Prove every archive the plan installs, then change the environment: conda's transaction, then pip;
    record the lock it now follows and check it. Bad input and unreachable or tampered archives stop it
    before anything is touched. All of it holds the environment's lock (envguard.engine.target, as create
    does): another sync or a create of it waits, then refuses naming this one; and the plan is made again
    under the lock when the environment changed since it was shown (another sync finished first, or the
    journal of a killed create was recovered), so a stale plan never lands."""
    prefix = Path(prepared.plan.prefix)
    with targets.hold(prefix) as held:
        if held.recovered or stat_fingerprint(prefix) != prepared.fingerprint:
            again = prepare(options)
            prepared = dataclasses.replace(again, timings=(*prepared.timings, *again.timings))
        return _apply(prepared, options)


def _apply(prepared: Prepared, options: SyncOptions) -> SyncResult:
    plan = prepared.plan
    if plan.empty:
        return unchanged(prepared)
    prefix = Path(plan.prefix)
    pkgs_dir = options.pkgs_dir or default_pkgs_dir()
    # chosen as create chooses (a tool that is not installed is one line, before anything is fetched)
    backend = (
        backends.select(options.backend, pkgs_dir=pkgs_dir, progress=options.progress)
        if plan.of("conda")
        else None
    )
    engine = pipengine.select() if plan.of("pip") else None
    watch = Stopwatch(prepared.timings)
    with using_cache(pkgs_dir):  # `envguard clean` waits until what was fetched is linked (as create, verify)
        with watch.stage("hashes"):
            fetched = fetch(
                (*plan.to_link("conda"), *plan.to_link("pip")), pkgs_dir, progress=options.progress
            )
        if fetched.mismatches:
            raise BackendError(f"{prepared.lock}: {integrity_message(fetched.mismatches)}")
        warnings: list[str] = [
            *prepared.warnings,
            *(f"{a.package.describe()}: the lock has no sha256, checked md5 only" for a in fetched.md5_only),
        ]
        unhashed = [p for p in plan.to_link("pip") if not has_archive(p)]
        # what pip finds for itself (an index release, a project folder): asked before any change
        if unhashed and engine is not None:
            with watch.stage("resolve", engine.describe()):
                install_unhashed(prefix, unhashed, pkgs_dir, dry_run=True, engine=engine)
        # the changes are made holding the environment's lock (envguard.engine.target, as create holds it): a
        # create or another sync of it waits, then refuses naming this one
        with targets.hold(prefix):
            warnings += _change(prepared, fetched, backend, engine, pkgs_dir, watch)
    with watch.stage("re-check"):
        _remember(prefix, prepared.lock)
        after = _check_after(prefix, prepared.target, files=options.files)
    return SyncResult(
        plan,
        backend=_engines(backend.describe() if backend is not None else "", engine),
        applied=True,
        after=after,
        warnings=tuple(warnings),
        timings=watch.timings,
    )


def _change(
    prepared: Prepared,
    fetched: Fetched,
    backend: Backend | None,
    engine: pipengine.PipEngine | None,
    pkgs_dir: Path,
    watch: Stopwatch,
) -> list[str]:
    """Conda's transaction through `backend`, then pip's through `engine`; their warnings. A failure once
    something changed says how to finish."""
    plan, prefix = prepared.plan, Path(prepared.plan.prefix)
    conda_steps = plan.of("conda")
    specs, removed_specs = requested_changes(plan, prepared.live, prepared.target)
    warnings: list[str] = []
    started = False
    try:
        with sigterm_as_interrupt():
            if backend is not None:
                started = True
                change = Change(
                    link=plan.to_link("conda"),
                    unlink=tuple(s.old for s in conda_steps if s.action == "unlink" and s.old is not None),
                    reinstall=frozenset(s.name for s in conda_steps if s.action in ("replace", "reinstall")),
                    specs=specs,
                    removed_specs=removed_specs,
                    platform=plan.platform,
                    fetched=_part(fetched, "conda"),
                )
                old = [s.old for s in conda_steps if s.old is not None and s.action != "link"]
                with (
                    watch.stage("conda", backend.describe()),
                    leftovers.changing(prefix, leftovers.folders_of(prefix, old)),
                ):
                    warnings += backend.update(prefix, change)
            if engine is not None:
                started = True
                with watch.stage("pip", engine.describe()):
                    uninstall(prefix, [p.name for p in plan.to_unlink("pip")])
                    warnings += install(
                        _part(fetched, "pip"),
                        prefix,
                        specs=(),
                        platform=None,
                        pkgs_dir=pkgs_dir,
                        engine=engine,
                    )
    except EnvguardError as exc:
        if not started:
            raise
        raise type(exc)(f"{exc}; {_AGAIN}") from exc
    except KeyboardInterrupt:
        if started:
            warn(f"sync was interrupted: {_AGAIN}")
        raise
    return warnings


_AGAIN = (
    "the environment is partly synced: run the same `envguard sync` again to finish (`envguard check` lists "
    "what is left)"
)


def _engines(conda: str, pip: pipengine.PipEngine | None) -> str:
    """Which engines ran: the conda backend's description, then the pip engine's (`uv`, `pip (...)`)."""
    return " + ".join(part for part in (conda, pip.describe() if pip is not None else "") if part)


def _part(fetched: Fetched, manager: str) -> Fetched:
    """The packages and proved archives of one manager."""
    return Fetched(
        tuple(p for p in fetched.packages if p.manager == manager),
        tuple(a for a in fetched.archives if a.package.manager == manager),
    )


def _check_after(prefix: Path, target: Environment, *, files: bool) -> CheckReport:
    """check's report of the synced environment (with `--files`, its installed files too)."""
    live = sources.read_live(prefix)
    if {p.subdir for p in live.conda_packages()} <= {"noarch", target.platform}:
        live = dataclasses.replace(live, platform=target.platform)  # a noarch-only prefix cannot tell
    report = check_environment(live, target)
    if files:
        found, notes, _reinstall = file_findings(prefix)
        report = report.merged(found, notes)
    return report


def _remember(prefix: Path, lock: Path) -> None:
    """Record the lock the environment follows (best effort; unchanged when it already says so)."""
    known = lockref.recall(prefix)
    if known is None or known.lock != lock.resolve() or not known.current():
        lockref.remember(prefix, lock)
