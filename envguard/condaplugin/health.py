"""What the conda plugin reports on an environment (conda-free, so it is tested without conda): is it still
what its lock says, and are torch, torchvision and torchaudio one release and one build.

Which lock an environment follows: the one envguard recorded in it (envguard.prefix.lockref: `envguard lock
PREFIX -o FILE`, `create --lock`, `sync`), else, for the active environment, the project's lock found from the
working folder as `envguard check` finds it (envguard.check.discovery): a project's lock is the active
environment's, as for `envguard check` without SOURCE, never another environment's that `conda install -n`
happens to be run from the project's folder. Neither is no lock, and the checks say so and pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from envguard.check.discovery import discover
from envguard.check.report import CheckReport
from envguard.check.run import CheckOptions, check
from envguard.config import active_prefix
from envguard.cuda import FamilyMember, family_problems, torch_family
from envguard.errors import EnvguardError
from envguard.prefix.lockref import recall
from envguard.sources import read_live

LockState = Literal["clean", "drift", "no-lock", "unreadable"]


@dataclass(frozen=True)
class Followed:
    """The lock an environment follows and how it was found; `edited`: a recorded lock whose bytes changed
    since it was recorded."""

    lock: Path
    how: Literal["recorded", "project"]
    edited: bool = False


@dataclass(frozen=True)
class LockHealth:
    """The environment against its lock: clean, drift (`report` says what), no lock, or a lock (or project
    configuration) that cannot be read (`problem`, one line)."""

    prefix: Path
    state: LockState
    followed: Followed | None = None
    report: CheckReport | None = None  # a full check's report; None for a clean answer served from the cache
    problem: str = ""


@dataclass(frozen=True)
class TorchHealth:
    """torch and its family in the environment, and why they do not belong together (none: they do); a
    `problem` when the environment cannot be read."""

    prefix: Path
    members: tuple[FamilyMember, ...] = ()
    problems: tuple[str, ...] = ()
    problem: str = ""


def followed_lock(prefix: Path, start: Path | None = None) -> Followed | None:
    """The lock recorded in `prefix`, else (the active environment only) the project's lock found from
    `start` (default: the working folder), else None. A project configuration that cannot be read raises
    (bad input)."""
    ref = recall(prefix)
    if ref is not None:
        return Followed(ref.lock, "recorded", edited=not ref.current())
    meant = active_prefix(None if start is None else str(start))
    if meant is None or meant.startswith("name:") or not _same(prefix, Path(meant)):
        return None
    found = discover(start)
    return Followed(found, "project") if found is not None else None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def lock_health(prefix: Path, start: Path | None = None) -> LockHealth:
    """Check `prefix` against the lock it follows, as `envguard check PREFIX --lock LOCK` would (its cache
    included). Bad input (a lock that cannot be read, a broken pyproject.toml) is a `problem`, never
    raised."""
    try:
        followed = followed_lock(prefix, start)
    except EnvguardError as exc:
        return LockHealth(prefix, "unreadable", problem=str(exc))
    if followed is None:
        return LockHealth(prefix, "no-lock")
    try:
        checked = check(CheckOptions(source=str(prefix), lock=str(followed.lock)))
    except EnvguardError as exc:
        return LockHealth(prefix, "unreadable", followed, problem=str(exc))
    state: LockState = "clean" if checked.exit_code == 0 else "drift"
    return LockHealth(prefix, state, followed, checked.report)


def torch_health(prefix: Path) -> TorchHealth:
    """torch, torchvision and torchaudio as installed in `prefix` (conda-meta and pip metadata, nothing
    imported), and what does not belong together."""
    try:
        env = read_live(prefix, detect_virtual=False)
    except EnvguardError as exc:
        return TorchHealth(prefix, problem=str(exc))
    members = torch_family(env.packages)
    return TorchHealth(prefix, members, family_problems(members))
