"""What a comparison found (pure types): a Change per difference, grouped into a Diff, in category order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ChangeKind = Literal["only-a", "only-b", "changed", "unsatisfied", "unjudged", "hazard"]
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
class Change:
    """One difference: an item only on one side, changed fields, an unsatisfied spec, or a hazard (info
    only)."""

    category: str
    kind: ChangeKind
    name: str
    a: str | None = None
    b: str | None = None
    fields: tuple[str, ...] = ()

    @property
    def informational(self) -> bool:
        """Hazards and unjudgeable specs are reported but do not make two environments different."""
        return self.kind in ("hazard", "unjudged")


@dataclass(frozen=True)
class Diff:
    """The grouped result of comparing A with B."""

    a_label: str
    b_label: str
    mode: Literal["exact", "satisfaction", "specs"]
    changes: tuple[Change, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def equal(self) -> bool:
        return not any(not c.informational for c in self.changes)

    def grouped(self) -> dict[str, tuple[Change, ...]]:
        """Changes per category, in CATEGORIES order, omitting empty categories."""
        result: dict[str, tuple[Change, ...]] = {}
        for category in CATEGORIES:
            items = tuple(c for c in self.changes if c.category == category)
            if items:
                result[category] = items
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a_label,
            "b": self.b_label,
            "mode": self.mode,
            "equal": self.equal,
            "changes": {
                category: [
                    {"kind": c.kind, "name": c.name, "a": c.a, "b": c.b, "fields": list(c.fields)}
                    for c in items
                ]
                for category, items in self.grouped().items()
            },
            "notes": list(self.notes),
        }
