"""The one validation layer for values read from JSON/YAML into envguard's model: each field's type is checked
where a file is read, and a wrong one is bad input (exit 2) naming the file and the field, never a crash
further down."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from envguard.errors import BadInputError

Kind = Literal["str", "int", "bool", "number", "list[str]", "list[dict]", "dict", "str|list[str]", "list"]
MAX_INT_DIGITS = 18  # a build number or a size, never a 5,000-digit string

_NAMES = {
    "str": "a string",
    "int": "an integer",
    "bool": "true or false",
    "number": "a number",
    "list[str]": "a list of strings",
    "list[dict]": "a list of mappings",
    "dict": "a mapping",
    "str|list[str]": "a string or a list of strings",
    "list": "a list",
}


def matches(value: Any, kind: Kind) -> bool:
    """Whether `value` (not None) has the JSON type `kind`."""
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return (
            isinstance(value, int) and not isinstance(value, bool) and len(str(abs(value))) <= MAX_INT_DIGITS
        )
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "dict":
        return isinstance(value, Mapping)
    if kind == "list[dict]":
        return isinstance(value, list | tuple) and all(isinstance(v, Mapping) for v in value)
    if kind == "list":
        return isinstance(value, list | tuple)
    if kind == "str|list[str]":
        return isinstance(value, str) or matches(value, "list[str]")
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


def check_fields(data: Mapping[str, Any], schema: Mapping[str, Kind], origin: object, fix: str) -> None:
    """Raise BadInputError naming `origin` and the first field of `schema` present in `data` (and not None)
    whose value has the wrong type."""
    for key, kind in schema.items():
        value = data.get(key)
        if value is not None and not matches(value, kind):
            raise BadInputError(
                f"{origin}: field {key!r} must be {_NAMES[kind]}, not {describe(value)}; {fix}"
            )


def describe(value: Any) -> str:
    """A short, safe description of a wrongly typed value for messages (never the whole value)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"the string {value[:20]!r}" + ("..." if len(value) > 20 else "")
    if isinstance(value, int):
        return "an integer" if len(str(abs(value))) <= MAX_INT_DIGITS else "an integer too large"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list" + (" with a non-string item" if value else "")
    return type(value).__name__


def require(data: Mapping[str, Any], key: str, kind: Kind, origin: object, fix: str) -> Any:
    """`data[key]`, which must be present with type `kind`."""
    value = data.get(key)
    if value is None or not matches(value, kind):
        what = "missing" if value is None else f"{describe(value)}"
        raise BadInputError(f"{origin}: field {key!r} must be {_NAMES[kind]} ({what}); {fix}")
    return value
