"""Survey: discovery -> usage -> scan -> classify -> measure -> account, giving the plan a dry run shows and
`--yes` executes. Reads only; never writes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from envguard.clean import discovery, locks
from envguard.clean.execute import runs
from envguard.clean.measure import Mounted, Unreadable, facts, mount_points
from envguard.clean.model import (
    Cache,
    CacheState,
    Candidate,
    Category,
    CleanPlan,
    Entry,
    EnvRef,
    FileFact,
    Usage,
)
from envguard.clean.plan import RECENT_SECONDS, account, classify
from envguard.clean.scan import scan
from envguard.output import progress_bar
from envguard.prefix.condaconfig import CondaInfo


@dataclass(frozen=True, slots=True)
class CleanRequest:
    """What the user asked `clean` to look at."""

    caches: tuple[Path, ...] = ()
    envs: tuple[Path, ...] = ()
    pixi_roots: tuple[Path, ...] = ()
    keep_locked: tuple[Path, ...] = ()
    only: tuple[Category, ...] = ()
    conda_info: bool = True
    progress: bool = False  # bars on stderr while caches are scanned and items measured (a person, a TTY)
    keep_recent: float = RECENT_SECONDS  # seconds: what the caches got more recently than this is kept

    def scope(self, *, caches_only: bool = False) -> tuple[str, ...]:
        """The options that chose what this run looked at, as words: a printed `envguard clean ... --yes`
        acts on the same caches with the same protection (`caches_only`: the trash's, for --undo and
        --purge-trash)."""
        words = [w for cache in self.caches for w in ("--cache", str(cache))]
        if caches_only:
            return tuple(words)
        for option, paths in (("--env", self.envs), ("--pixi-root", self.pixi_roots)):
            words += [w for path in paths for w in (option, str(path))]
        words += [w for lock in self.keep_locked for w in ("--keep-locked", str(lock))]
        words += [w for category in self.only for w in ("--only", category)]
        if self.keep_recent != RECENT_SECONDS:
            words += ["--keep-recent", f"{self.keep_recent:g}s" if self.keep_recent else "0"]
        return tuple(words)


@dataclass(frozen=True)
class Found:
    """The caches of a request, what conda itself said (when it was asked) and notes about what was
    skipped."""

    caches: list[Cache]
    info: CondaInfo | None
    notes: list[str]


def find_caches(request: CleanRequest) -> Found:
    info, notes = discovery.conda_info() if request.conda_info else (None, [])
    caches, cache_notes = discovery.discover_caches(request.caches, info)
    return Found(caches, info, [*notes, *cache_notes])


def find_environments(request: CleanRequest, found: Found) -> tuple[list[EnvRef], list[str]]:
    """The environments whose records protect packages, as they are now (read again under the caches'
    locks: an install that finished a moment ago counts)."""
    envs, env_notes = discovery.discover_environments(request.envs, request.pixi_roots, found.info)
    return envs, [*found.notes, *env_notes]


def plan_for(
    caches: Sequence[Cache],
    usage: Usage,
    *,
    only: Sequence[Category] = (),
    now: float | None = None,
    notes: Sequence[str] = (),
    progress: bool = False,
    recent: float = RECENT_SECONDS,
) -> CleanPlan:
    """Scan `caches` and decide against `usage`; with `progress`, bars on stderr for the scan and the
    measuring."""
    now = time.time() if now is None else now
    entries: list[Entry] = []
    problems: list[str] = list(usage.problems)
    with progress_bar(f"scanning {len(caches)} package cache(s)", len(caches), progress) as advance:
        for cache in caches:
            found, scan_problems = scan(cache, known=lambda name: usage.uses(name, name))
            entries += found
            problems += scan_problems
            advance()
    candidates, kept = classify(entries, usage, now=now, only=only, recent=recent)
    measured: list[tuple[Candidate, Sequence[FileFact]]] = []
    mounts = mount_points()
    with progress_bar(f"measuring {len(candidates)} item(s)", len(candidates), progress) as advance:
        for candidate in candidates:
            try:
                inside = facts((candidate.entry.path, *candidate.entry.companions), mounts)
                measured.append((candidate, inside))
            except Mounted as exc:
                problems.append(f"{exc}; {candidate.entry.name} left alone (clean never enters a mount)")
                kept["holds a mount point"] = kept.get("holds a mount point", 0) + 1
            except Unreadable as exc:
                problems.append(f"{exc}; {candidate.entry.name} left alone (its size is unknown)")
                kept["unreadable"] = kept.get("unreadable", 0) + 1
            advance()
    states = tuple(_state(cache, entries, usage) for cache in caches)
    return CleanPlan(
        items=tuple(account(measured)),
        caches=states,
        usage=usage,
        kept=kept,
        problems=tuple(problems),
        notes=tuple(notes),
    )


def _state(cache: Cache, entries: Sequence[Entry], usage: Usage) -> CacheState:
    packages = [e for e in entries if e.cache == cache and e.kind == "package"]
    in_use = sum(1 for e in packages if usage.uses(e.dist, e.name))
    trash_runs = tuple(runs(cache))
    trash_bytes = 0
    if trash_runs:
        try:
            unique = {(f.dev, f.ino): f.blocks for f in facts([cache.trash])}
            trash_bytes = sum(unique.values()) * 512
        except Unreadable:
            trash_bytes = 0
    return CacheState(
        cache=cache,
        packages=len(packages),
        in_use=in_use,
        trash_runs=trash_runs,
        trash_disk_bytes=trash_bytes,
        holders=locks.holders(cache, ignore_pid=os.getpid()),  # clean --yes holds them itself by now
    )
