"""What a comparison found (pure types): a Difference per item, grouped into a Diff, in category order; check
reports the same Differences against its target."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

DifferenceKind = Literal["only-a", "only-b", "changed", "unsatisfied", "unjudged", "hazard"]
CATEGORIES = (
    "platform",
    "python",
    "conda",
    "pip",
    "both-managers",
    "cuda",
    "virtual",
    "fingerprints",
    "specs",
    "channels",
)
TITLES = {
    "platform": "Platform",
    "python": "Python",
    "conda": "Conda packages",
    "pip": "pip packages",
    "both-managers": "Installed by both conda and pip",
    "cuda": "CUDA",
    "virtual": "Virtual packages",
    "fingerprints": "RNG fingerprints",
    "specs": "Requested specs",
    "channels": "Channels",
}


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference between A and B (a target and a live environment, for check): an item only on one
    side, changed fields, an unsatisfied spec, a hazard (info only), or a problem check found itself (a
    file, the lock's freshness). `text`, where set, is its wording in the words of whoever reported it
    (check words every difference against its target); otherwise `message()` words it."""

    category: str
    kind: str  # a DifferenceKind, or check's own (a file's problem: "altered", "missing"); "" for none
    name: str = ""
    a: str | None = None
    b: str | None = None
    fields: tuple[str, ...] = ()
    # the raw values behind `a`/`b`: (field, value in A, value in B), the field that tells most first; for an
    # item on one side only, its version (or value) on that side
    values: tuple[tuple[str, str | None, str | None], ...] = ()
    text: str = ""
    # for a changed conda package, what both sides share ((field, value): version, build, channel), so a
    # report can say it once and show only what changed as `old → new`
    same: tuple[tuple[str, str], ...] = ()

    @property
    def informational(self) -> bool:
        """Hazards and unjudgeable specs are reported but do not make two environments different."""
        return self.kind in ("hazard", "unjudged")

    def structured(self) -> dict[str, Any]:
        """`{category, name, field, expected, actual, kind}` (A is expected, B actual) with raw values, so a
        bot can tell the name, the field and the two values apart; `values` has every changed field."""
        field_name: str | None = self.fields[0] if self.fields else None
        if self.kind in ("unsatisfied", "unjudged"):
            field_name = "spec"
        expected, actual = self.a, self.b
        if self.values:
            first = self.values[0]
            expected, actual = first[1], first[2]
            if self.kind == "changed":
                field_name = first[0]
        result: dict[str, Any] = {
            "category": self.category,
            "name": self.name or None,
            "field": field_name,
            "expected": expected,
            "actual": actual,
            "kind": self.kind or None,
        }
        if self.kind == "changed" and len(self.values) > 1:
            result["values"] = {f: {"expected": x, "actual": y} for f, x, y in self.values}
        return result

    def message(self, a_word: str = "A", b_word: str = "B") -> str:
        """One line: `numpy: 1.26.4 (conda-forge) in A, 2.0.0 (conda-forge) in B (version changed)`."""
        if self.text:
            return self.text
        if self.kind == "only-a":
            return f"{self.name} {self.a or ''}: only in {a_word}".replace(" :", ":")
        if self.kind == "only-b":
            return f"{self.name} {self.b or ''}: only in {b_word}".replace(" :", ":")
        if self.kind == "unsatisfied":
            return f"{self.a}: not satisfied by {b_word} (has: {self.b or 'none'})"
        if self.kind == "unjudged":
            return f"{self.a}: cannot be checked without installing ({b_word} has: {self.b or 'none'})"
        if self.kind == "hazard":
            return f"{self.name}: installed by both conda and pip ({self.b or self.a})"
        what = f" ({', '.join(self.fields)} changed)" if self.fields and self.fields != ("value",) else ""
        return f"{self.name}: {self.a or 'none'} in {a_word}, {self.b or 'none'} in {b_word}{what}"


@dataclass(frozen=True)
class Diff:
    """The grouped result of comparing A with B."""

    a_label: str
    b_label: str
    mode: Literal["exact", "satisfaction", "specs"]
    changes: tuple[Difference, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def equal(self) -> bool:
        return not any(not c.informational for c in self.changes)

    def grouped(self) -> dict[str, tuple[Difference, ...]]:
        """Changes per category, in CATEGORIES order, omitting empty categories; within one, changed before
        added before removed (`by_kind`)."""
        result: dict[str, tuple[Difference, ...]] = {}
        for category in CATEGORIES:
            items = by_kind(c for c in self.changes if c.category == category)
            if items:
                result[category] = items
        return result


# changed first (the same package, another version: what a reader looks for), then added (only in B, or
# installed but not in check's target), then removed (only in A: not installed), then the rest
KIND_ORDER = ("changed", "unsatisfied", "only-b", "only-a")


def by_kind(changes: Iterable[Difference]) -> tuple[Difference, ...]:
    """`changes` in KIND_ORDER, each kind in its given order (a stable sort)."""
    rank = {kind: i for i, kind in enumerate(KIND_ORDER)}
    return tuple(sorted(changes, key=lambda c: rank.get(c.kind, len(KIND_ORDER))))


def sample(changes: Sequence[Difference], shown: int) -> tuple[Difference, ...]:
    """At most `shown` of `changes` (in `by_kind` order) with every kind kept visible: the slots go round the
    kinds one at a time, so one changed and one added package are never hidden behind ten removed ones."""
    kinds: dict[str, list[Difference]] = {}
    for change in by_kind(changes):
        kinds.setdefault(change.kind, []).append(change)
    taken = dict.fromkeys(kinds, 0)
    left = min(shown, len(changes))
    while left:
        for kind, items in kinds.items():
            if left and taken[kind] < len(items):
                taken[kind] += 1
                left -= 1
    return tuple(c for kind, items in kinds.items() for c in items[: taken[kind]])
