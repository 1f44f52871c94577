"""A Package as a cache row (the list of its fields' values in the dataclass's order; a pip origin as a list
of its fields), shared by the record cache and the whole-environment cache, and each row's JSON text encoded
once per run.

A cold read of a prefix writes both caches, and both hold the same packages: encoding 100,000 rows took
~0.7 s per cache. The record cache encodes each package's row (`texts`) and keeps the texts of that last
batch (`remember`); the whole-environment entry written next from the same Package objects takes them
(`texts` again: found by identity; the batch holds the packages, so an id is never reused while it is kept)
instead of encoding them again. Holding one batch at a time bounds the memory; `forget` drops it once used.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from envguard.model import Package, PipOrigin
from envguard.validate import MAX_INT_DIGITS

FIELDS = tuple(f.name for f in dataclasses.fields(Package))
WIDTH = len(FIELDS)
_VALUES = attrgetter(*FIELDS)
_ORIGIN = FIELDS.index("origin")
_DEPENDS = FIELDS.index("depends")
_NUMBER = FIELDS.index("build_number")
_TEXT = tuple(i for i, f in enumerate(dataclasses.fields(Package)) if f.type in ("str", "Manager"))
_BOUND = 10**MAX_INT_DIGITS
_ENCODE = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode  # as the caches' json.dumps


def _row_encoder() -> Callable[[list[Any]], str]:
    """`_ENCODE` for one row, through one C encoder made once: `encode` makes a new one for each call, ~1.3 us
    of a row's ~3 (json's own C encoder with encode's settings; `_ENCODE` itself where that is missing or
    answers otherwise for a probe row)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _ENCODE
    default = json.JSONEncoder().default
    probe = ["conda", '\u00e9\u2028"x\\', -1, None, [1.5, True, ["a"]], {"k": "v"}]
    try:
        chunks = make(None, default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)

        def encode(values: list[Any]) -> str:
            return "".join(chunks(values, 0))

        return encode if encode(probe) == _ENCODE(probe) else _ENCODE
    except (TypeError, ValueError):  # another json's C encoder
        return _ENCODE


_ENCODE_ROW = _row_encoder()

# The last batch encoded: id(package) -> (the package, its row's JSON text).
_BATCH: dict[int, tuple[Package, str]] = {}


def row(package: Package) -> list[Any]:
    """The package's row (plain JSON data)."""
    values = list(_VALUES(package))
    if package.origin is not None:
        values[_ORIGIN] = list(dataclasses.astuple(package.origin))
    values[_DEPENDS] = list(package.depends)
    return values


def texts(packages: list[Package]) -> list[str]:
    """Each package's row as JSON text (from the remembered batch where it holds the package)."""
    known = _BATCH
    out = []
    for package in packages:
        seen = known.get(id(package))
        out.append(seen[1] if seen is not None and seen[0] is package else _ENCODE_ROW(row(package)))
    return out


def remember(packages: list[Package], encoded: list[str]) -> None:
    """Keep this batch's texts for the next cache written from the same packages (replacing the last)."""
    _BATCH.clear()
    _BATCH.update({id(p): (p, t) for p, t in zip(packages, encoded, strict=True)})


def forget() -> None:
    """Drop the remembered batch."""
    _BATCH.clear()


def package(values: list[Any]) -> Package:
    """A row written by `row` back as its Package, trusting the types (a cache entry with a checksum)."""
    if len(values) != WIDTH:
        raise ValueError("package row")
    origin = values[_ORIGIN]
    if origin is not None:
        values[_ORIGIN] = PipOrigin(*origin)
    values[_DEPENDS] = tuple(values[_DEPENDS])
    # As pickle rebuilds an instance: the frozen dataclass's __init__ sets each field through
    # object.__setattr__, twice the cost of filling its __dict__ (the fields were the reader's own).
    made = object.__new__(Package)
    made.__dict__.update(zip(FIELDS, values, strict=False))  # the width is checked above
    return made


def checked_package(values: Any) -> Package:
    """`package` for a row from an entry without a checksum: each field's type is checked first (a wrong one
    is a ValueError or TypeError: a miss)."""
    if values.__class__ is not list or len(values) != WIDTH or values[0] != "conda":
        raise ValueError("a record's package row")
    for index in _TEXT:
        if values[index].__class__ is not str:
            raise TypeError("a package row's text field is not text")
    number, depends, origin = values[_NUMBER], values[_DEPENDS], values[_ORIGIN]
    if number.__class__ is not int or not -_BOUND < number < _BOUND:
        raise ValueError("a package row's build number is wrong")
    if depends.__class__ is not list or any(d.__class__ is not str for d in depends):
        raise TypeError("a package row's depends is not a list of text")
    if origin is not None:
        raise ValueError("a record's package has no pip origin")
    return package(values)
