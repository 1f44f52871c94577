"""`envguard check` logic (pure): a live environment against a target (lock, snapshot, prefix or
environment.yml).

Against a resolved target the match is exact and two-way; against an environment.yml it is satisfaction plus
channels. Differences the environment cannot control (this machine's virtual packages and CUDA driver, a
package installed by both conda and pip) are notes: reported, never a failure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from envguard.check.fixes import fix_commands
from envguard.diff import CATEGORIES, TITLES, Difference, by_kind, diff_environments
from envguard.errors import BadInputError
from envguard.model import Environment
from envguard.specs import version_less

Severity = Literal["drift", "note"]
CHECK_CATEGORIES = (*CATEGORIES, "files", "lock", "attestation")
CHECK_TITLES = {**TITLES, "files": "Installed files", "lock": "Lock freshness", "attestation": "Attestation"}
_NOTE_CATEGORIES = frozenset({"virtual", "both-managers"})
_TARGET_WORD = {
    "conda-lock": "the lock",
    "pixi-lock": "the lock",
    "explicit": "the lock",
    "snapshot": "the snapshot",
    "environment.yml": "environment.yml",
    "prefix": "the reference",
    "venv": "the reference",
}


@dataclass(frozen=True)
class CheckReport:
    """Every finding of one check run; `clean` when none is drift."""

    target: str
    live: str
    findings: tuple[Difference, ...] = ()
    notes: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()  # the commands that get back to the target (envguard.check.fixes)
    nothing_to_compare: str = ""  # why there was nothing to check (a live lock's freshness): the verdict
    warnings: tuple[str, ...] = ()  # what the reading said on the way (a lock's skipped entries, a record)

    @property
    def clean(self) -> bool:
        return not any(severity(f) == "drift" for f in self.findings)

    @property
    def drift_count(self) -> int:
        return sum(1 for f in self.findings if severity(f) == "drift")

    def grouped(self) -> dict[str, tuple[Difference, ...]]:
        result: dict[str, tuple[Difference, ...]] = {}
        for category in CHECK_CATEGORIES:
            items = by_kind(f for f in self.findings if f.category == category)  # changed, added, removed
            if items:
                result[category] = items
        return result

    def verdict(self) -> str:
        """The one-line summary that ends the human output."""
        if self.nothing_to_compare:
            return f"OK: {self.nothing_to_compare}"
        if self.clean:
            extra = f" ({len(self.findings)} note(s))" if self.findings else ""
            return f"OK: {self.live} matches {self.target}{extra}"
        return f"DRIFT: {self.drift_count} difference(s) between {self.live} and {self.target}"

    def merged(
        self, findings: Iterable[Difference], notes: Iterable[str] = (), fixes: Iterable[str] = ()
    ) -> CheckReport:
        """This report plus more findings (files, lock freshness) and the commands that fix them."""
        return dataclasses.replace(
            self,
            findings=(*self.findings, *findings),
            notes=(*self.notes, *notes),
            fixes=tuple(dict.fromkeys((*self.fixes, *fixes))),
        )


def check_environment(live: Environment, target: Environment, *, rng: bool = False) -> CheckReport:
    """Check LIVE against TARGET. With `rng`, LIVE must carry freshly probed fingerprints and TARGET recorded
    ones."""
    if rng and target.fingerprints is None and not target.spec_only:
        raise BadInputError(
            f"{target.source or target.kind}: --rng needs recorded fingerprints, but it has none for "
            f"{target.platform or 'this platform'}; re-create it with `envguard lock` (without --no-probe)"
        )

    word = _TARGET_WORD.get(target.kind, "the target")
    virtual = virtual_findings(live, target, word)
    original_live, original_target = live, target
    # virtual packages describe the machine, not the environment: judged above, not compared item by item
    live = dataclasses.replace(live, virtual_packages=(), fingerprints=live.fingerprints if rng else None)
    target = dataclasses.replace(
        target, virtual_packages=(), fingerprints=target.fingerprints if rng else None
    )
    diff = diff_environments(target, live, engine="fast")
    findings = (*(finding(change, word) for change in diff.changes), *virtual)
    fixes = fix_commands(original_live, original_target, diff.changes)
    return CheckReport(
        target.source or target.kind, live.source or live.prefix or live.kind, findings, diff.notes, fixes
    )


def virtual_findings(live: Environment, target: Environment, word: str) -> tuple[Difference, ...]:
    """Notes where this machine offers less than the target was made for: a virtual package (`__cuda`,
    `__glibc`) missing or older here. A newer driver or glibc, or extra virtual packages, are fine."""
    if not live.virtual_packages:
        return ()
    have = {v.name: v.version for v in live.virtual_packages}
    notes = []
    for wanted in target.virtual_packages:
        if wanted.name in ("__archspec", "__unix"):
            continue
        mine = have.get(wanted.name)
        if mine is None or _older(mine, wanted.version):
            here = mine or "none"
            notes.append(
                Difference(
                    "virtual",
                    "changed" if mine else "only-a",
                    wanted.name,
                    wanted.version,
                    mine,
                    ("version",),
                    text=f"{word} was made for {wanted.name} {wanted.version}; this machine has {here}",
                )
            )
    return tuple(notes)


def _older(mine: str, wanted: str) -> bool:
    """conda's version order: `12.4` and `12.4.0` are equal; an unparsable version here counts as older."""
    return version_less(mine, wanted)


def severity(difference: Difference) -> Severity:
    """Drift, or a note: what the environment cannot control (this machine's virtual packages and CUDA
    driver, a package installed by both conda and pip) and what cannot be judged is reported, never a
    failure."""
    if difference.informational or difference.category in _NOTE_CATEGORIES:
        return "note"
    return "note" if (difference.category, difference.name) == ("cuda", "driver") else "drift"


def finding(change: Difference, word: str) -> Difference:
    """A difference of the comparison (A = target, B = live) worded against the target."""
    return dataclasses.replace(change, text=_message(change, word))


_SCALAR = frozenset({"platform", "python", "cuda", "fingerprints"})


def _message(change: Difference, word: str) -> str:
    name = _item_name(change)
    if change.category in _SCALAR and change.kind in ("only-a", "only-b", "changed"):
        return f"{name}: {change.a or 'none'} in {word}, {change.b or 'none'} now"
    if change.kind == "only-a":
        return f"{name} {change.a}: in {word}, not installed"
    if change.kind == "only-b":
        return f"{name} {change.b}: installed, not in {word}"
    if change.kind == "unsatisfied":
        return f"{change.a}: not satisfied (installed: {change.b})"
    if change.kind == "unjudged":
        return f"{change.a}: cannot be checked without installing (installed: {change.b})"
    if change.kind == "hazard":
        return f"{name}: installed by both conda and pip ({change.b or change.a}); pip's copy shadows conda's"
    if change.category == "channels":
        return (
            f"{name}: comes {change.b}, but environment.yml allows "
            f"{change.a.removeprefix('one of ') if change.a else ''}"
        )
    fields = ", ".join(change.fields)
    if change.category == "conda" and change.kind == "changed":
        return _conda_change(change, word, fields)
    return f"{name}: {change.a} in {word}, {change.b} installed ({fields} changed)"


_SIDE = ("version", "build", "channel")  # what a conda package's side shows (envguard.diff.compare.describe)


def _conda_change(change: Difference, word: str, fields: str) -> str:
    """`pytorch 2.1.0 (CHANNEL): BUILD in the lock → BUILD installed (build changed)`: what both sides share
    said once, what changed as `old → new` (a build beside its version when the version changed)."""
    same = dict(change.same)
    sides = {f: (a, b) for f, a, b in change.values if f in _SIDE}
    if "version" in sides and "build" in same:
        sides["build"] = (same["build"], same.pop("build"))
    head = " ".join([change.name, *(same[f] for f in ("version", "build") if f in same)])
    if "channel" in same:
        head += f" ({same['channel']})"
    if not sides:  # the archive alone (its hash, subdir): nothing to show but what changed
        return f"{head}: {fields} changed"
    old, new = (" ".join(sides[f][i] or "none" for f in _SIDE if f in sides) for i in (0, 1))
    return f"{head}: {old} in {word} → {new} installed ({fields} changed)"


def _item_name(change: Difference) -> str:
    if change.category == "cuda":
        return {"driver": "CUDA driver", "toolkit": "CUDA toolkit", "torch build": "torch build"}.get(
            change.name, change.name
        )
    if change.category == "virtual":
        return f"virtual package {change.name}"
    if change.category == "fingerprints":
        return f"fingerprint {change.name}"
    if change.category == "pip":
        return f"{change.name} (pip)"
    return change.name
