"""`envguard clean`'s work: discover caches and environments, decide what is in use, then a dry run, a move to
the trash (under the caches' own locks), an undo or a purge. Returns what to show; the command renders it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from envguard.clean import discovery, execute, locks
from envguard.clean.model import CleanPlan, RunResult
from envguard.clean.survey import CleanRequest, Found, find_caches, find_environments, plan_for
from envguard.clean.usage import analyse
from envguard.errors import EXIT_DRIFT, EXIT_OK, EXIT_OPERATIONAL
from envguard.output import waiting

EXIT_INCOMPLETE = EXIT_DRIFT  # 1: the check "everything was restored" failed


Mode = Literal["dry-run", "clean", "undo", "purge-trash"]


@dataclass(frozen=True)
class CleanOutcome:
    """One clean action: a dry run's or a clean's plan (and what the clean did), or an undo's or a purge's
    result, with its exit code."""

    mode: Mode
    plan: CleanPlan | None
    result: RunResult | None
    exit_code: int
    scope: tuple[str, ...] = ()  # CleanRequest.scope(): what a printed `envguard clean` repeats


def clean(request: CleanRequest, *, yes: bool) -> CleanOutcome:
    """A dry run (default) or, with `yes`, move everything unused to each cache's trash. With `yes`, what
    environments use is read only once the caches' locks are held, so an install that finished meanwhile
    protects its packages."""
    found = find_caches(request)
    if not yes:
        plan = _plan(request, found)
        return CleanOutcome("dry-run", plan, None, EXIT_OK, request.scope())
    with locks.hold(found.caches):
        plan = _plan(request, found)
        result = execute.move_to_trash(plan, found.caches, execute.new_run_id())
    code = EXIT_OPERATIONAL if result.failed else EXIT_OK
    return CleanOutcome("clean", plan, result, code, request.scope(caches_only=True))


def _plan(request: CleanRequest, found: Found) -> CleanPlan:
    envs, notes = find_environments(request, found)
    with waiting(f"reading what {len(envs)} environment(s) use", request.progress):
        usage = analyse(envs, request.keep_locked)
    return plan_for(
        found.caches,
        usage,
        only=request.only,
        notes=notes,
        progress=request.progress,
        recent=request.keep_recent,
    )


def trash_action(request: CleanRequest, action: Literal["undo", "purge-trash"]) -> CleanOutcome:
    """`undo` (restore the last run) or `purge-trash` (delete the trash for good)."""
    info, _notes = discovery.conda_info()
    caches, _skipped = discovery.discover_caches(request.caches, info)
    with locks.hold(caches):
        result = execute.undo(caches) if action == "undo" else execute.purge(caches)
    return CleanOutcome(action, None, result, _trash_exit(result), request.scope(caches_only=True))


def _trash_exit(result: RunResult) -> int:
    """3 when a restore or delete failed; 1 when an undo left items in the trash (they exist again), so a
    script never takes a partial undo for a whole one; else 0 (also for "nothing to undo")."""
    if result.failed:
        return EXIT_OPERATIONAL
    if result.action == "undo" and result.run_id is not None and result.skipped:
        return EXIT_INCOMPLETE
    return EXIT_OK
