"""`envguard sync`'s plan (pure): the smallest transaction that makes an installed environment equal its lock.

It is planned from what `envguard check` finds (the same Differences, so a sync leaves nothing check would
report): a conda package in the lock and not installed is linked, one installed and not in the lock is
unlinked, one that differs in version, build, channel or archive is replaced; pip distributions likewise
(installed, removed, replaced). Packages whose files `check --files` found altered are reinstalled. Everything
else follows from the packages (python, the CUDA toolkit, the torch build) or is the machine's (virtual
packages, the driver), so it is never a step of its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from envguard.diff import Difference
from envguard.errors import BadInputError
from envguard.model import LOCAL_ORIGIN, PIP_ARCHIVES, Environment, Manager, Package
from envguard.sources import ALLOW_SELF, envguard_inside
from envguard.specs import spec_name

Action = Literal["link", "unlink", "replace", "reinstall"]
# what each action is called where conda's and pip's users know it
WORDS: dict[Manager, dict[Action, str]] = {
    "conda": {"link": "install", "unlink": "remove", "replace": "change", "reinstall": "reinstall"},
    "pip": {"link": "install", "unlink": "uninstall", "replace": "change", "reinstall": "reinstall"},
}
_ORDER: dict[Action, int] = {"unlink": 0, "replace": 1, "reinstall": 2, "link": 3}


@dataclass(frozen=True, slots=True)
class Step:
    """One package's change: `old` is what is installed (None for a link), `new` what the lock has (None for
    an unlink)."""

    manager: Manager
    action: Action
    name: str
    old: Package | None = None
    new: Package | None = None

    @property
    def word(self) -> str:
        return WORDS[self.manager][self.action]


@dataclass(frozen=True)
class SyncPlan:
    """Every step that makes the environment at `prefix` equal `lock` (for `platform`), conda's first."""

    prefix: str
    lock: str
    platform: str
    kind: str  # the environment's kind: "prefix" (conda) or "venv"
    steps: tuple[Step, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.steps

    def of(self, manager: Manager) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.manager == manager)

    def to_link(self, manager: Manager) -> tuple[Package, ...]:
        """The lock's packages this plan installs (linked, replaced or reinstalled)."""
        return tuple(s.new for s in self.of(manager) if s.new is not None)

    def to_unlink(self, manager: Manager) -> tuple[Package, ...]:
        """The installed packages this plan removes, or replaces (their old copy goes first)."""
        return tuple(s.old for s in self.of(manager) if s.old is not None)


def plan_sync(
    live: Environment,
    lock: Environment,
    differences: Iterable[Difference],
    reinstall: Collection[tuple[Manager, str]] = (),
) -> SyncPlan:
    """The plan from check's `differences` of LIVE against LOCK, plus a reinstall of each (manager, name) in
    `reinstall` (files altered) that is not changed anyway. What a sync cannot change is bad input saying
    what to do instead: conda packages for a venv, a venv's interpreter."""
    refuse_impossible(live, lock)
    installed, locked = _by_key(live), _by_key(lock)
    steps: dict[tuple[Manager, str], Step] = {}
    for change in differences:
        if change.category not in ("conda", "pip") or change.informational:
            continue
        manager: Manager = "conda" if change.category == "conda" else "pip"
        old, new = installed.get((manager, change.name)), locked.get((manager, change.name))
        if change.kind == "only-a" and new is not None:
            steps[(manager, change.name)] = Step(manager, "link", change.name, None, new)
        elif change.kind == "only-b" and old is not None:
            steps[(manager, change.name)] = Step(manager, "unlink", change.name, old, None)
        elif change.kind == "changed" and old is not None and new is not None:
            steps[(manager, change.name)] = Step(manager, "replace", change.name, old, new)
    for manager, name in reinstall:
        old, new = installed.get((manager, name)), locked.get((manager, name))
        if (manager, name) not in steps and old is not None and new is not None:
            steps[(manager, name)] = Step(manager, "reinstall", name, old, _from_where_it_is(new, old))
    ordered = sorted(steps.values(), key=lambda s: (s.manager != "conda", _ORDER[s.action], s.name))
    return SyncPlan(live.prefix or live.source, lock.source, lock.platform or "", live.kind, tuple(ordered))


def _from_where_it_is(locked: Package, installed: Package) -> Package:
    """What reinstalls a package the lock records only as "from a local path" (envguard.model.LOCAL_ORIGIN,
    which any local path matches): the installed copy's own origin and the hash pip recorded for it."""
    origin = installed.origin
    if locked.origin is None or locked.origin.url != LOCAL_ORIGIN or origin is None or not origin.url:
        return locked
    archive = origin.url if origin.url.endswith(PIP_ARCHIVES) else ""
    return dataclasses.replace(locked, url=archive, sha256=installed.sha256, origin=origin)


def _by_key(env: Environment) -> dict[tuple[Manager, str], Package]:
    """Packages by (manager, name), the last of a name winning as in check's comparison (pip can leave two
    dist-infos of one name: `pip install --target --upgrade`)."""
    return {(p.manager, p.name): p for p in env.packages}


def refuse_own(prefix: Path, *, allowed: bool = False) -> None:
    """Before anything is read: a sync never changes the environment envguard runs from (or one holding its
    interpreter or code: envguard installed with pipx, or in the environment itself) unless asked explicitly
    (`allowed`: ENVGUARD_ALLOW_SELF=1); its plan could uninstall envguard midway."""
    own = envguard_inside(prefix)
    if own is not None and not allowed:
        raise BadInputError(
            f"{prefix}: holds {own}; sync would change the envguard that is running and could remove it "
            f"midway; sync the project's environment instead (pass its folder as SOURCE), or set "
            f"{ALLOW_SELF}=1 to change this one anyway"
        )


def refuse_impossible(live: Environment, lock: Environment) -> None:
    """A venv cannot hold conda packages, and sync does not change a venv's interpreter."""
    where = live.prefix or live.source
    if live.kind == "venv" and lock.conda_packages():
        raise BadInputError(
            f"{where} is a venv, and {lock.source} locks {len(lock.conda_packages())} conda package(s) it "
            f"cannot hold; sync a conda environment instead (`envguard create --lock {lock.source} -p DIR`)"
        )
    if live.kind == "venv" and lock.python and live.python and live.python != lock.python:
        raise BadInputError(
            f"{where} runs Python {live.python} and {lock.source} records {lock.python}; sync does not "
            f"change a venv's interpreter: make a venv with Python {lock.python} and sync that one"
        )


def reinstall_targets(labels: Iterable[str]) -> set[tuple[Manager, str]]:
    """(manager, name) from `check --files` package labels: `name-version-build` (conda) or `name version
    (pip)`."""
    found: set[tuple[Manager, str]] = set()
    for label in labels:
        if label.endswith(" (pip)"):
            found.add(("pip", label.split()[0]))
        else:
            found.add(("conda", label.rsplit("-", 2)[0]))
    return found


def requested_changes(
    plan: SyncPlan, live: Environment, lock: Environment
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What conda-meta/history records as requested, as conda records an install and a remove: the lock's
    requested spec of each package linked (when the lock, or else the environment, asked for it by name: the
    exact `name==version=build` then), and the names unlinked that the environment had asked for."""
    asked_locked = {spec_name(r.spec): r.spec for r in lock.requested if r.manager == "conda"}
    asked_here = {spec_name(r.spec) for r in live.requested if r.manager == "conda"}
    specs = []
    for package in plan.to_link("conda"):
        if package.name in asked_locked:
            specs.append(asked_locked[package.name])
        elif package.name in asked_here:
            specs.append(f"{package.name}=={package.version}={package.build}")
    removed = [s.name for s in plan.of("conda") if s.action == "unlink" and s.name in asked_here]
    return tuple(specs), tuple(removed)
