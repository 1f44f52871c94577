"""conda's version order: pure for plain dotted numbers (the common case of virtual packages), rattler.Version
for anything else, loaded only then."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=8192)
def _version(text: str) -> Any:
    import rattler

    return rattler.Version(text)


def version_less(a: str, b: str) -> bool:
    """`a < b` in conda's version order (`12.4 == 12.4.0`). Plain dotted numbers, the common case for virtual
    packages, are compared without loading rattler; anything else goes through rattler.Version. An unparsable
    `a` counts as less (it cannot satisfy a minimum)."""
    plain_a, plain_b = _plain_version(a), _plain_version(b)
    if plain_a is not None and plain_b is not None:
        return plain_a < plain_b
    try:
        return bool(_version(a.strip()) < _version(b.strip()))
    except Exception:  # rattler raises its own exception type for an unparsable version
        return _plain_version(b) is not None or b.strip() != a.strip()


def _plain_version(text: str) -> tuple[int, ...] | None:
    parts = text.strip().split(".")
    if not all(p.isdigit() and p.isascii() for p in parts):
        return None
    numbers = [int(p) for p in parts]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()  # conda pads with zeros: 12.4 == 12.4.0
    return tuple(numbers)
