"""A JSON object read through typed accessors that say where a value is wrong (`throughput[0].rows[2].workers:
expected a whole number, got str`): what `wire` reads the in-environment module's output with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Malformed(Exception):
    """Where the output departs from the module's format, and how (wire.parse makes it one ProbeError)."""


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


class Obj:
    """One JSON object of the module's output with its place in the output (`throughput[0].rows[2]`), read
    through typed accessors: `number`, `text`, ... raise Malformed; `opt_*` allow a missing key or null."""

    __slots__ = ("_data", "where")

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise Malformed(f"{where or 'the output'}: expected an object, got {_kind(data)}")
        self._data: dict[str, Any] = data
        self.where = where

    def has(self, key: str) -> bool:
        """The key is there with a value (not null, not an empty object or list)."""
        value = self._data.get(key)
        return value is not None and value != {} and value != []

    def printed(self, key: str) -> bool:
        """The key is there and not null (an empty list counts: the module printed it)."""
        return self._data.get(key) is not None

    def _at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def _value(self, key: str, check: Callable[[object], bool], what: str, optional: bool) -> Any:
        value = self._data.get(key)
        if value is None and optional:
            return None
        if value is None and key not in self._data:
            raise Malformed(f"{self._at(key)}: missing (expected {what})")
        if not check(value):
            raise Malformed(f"{self._at(key)}: expected {what}, got {_kind(value)}")
        return value

    def text(self, key: str) -> str:
        return str(self._value(key, _is_text, "text", False))

    def opt_text(self, key: str) -> str | None:
        value = self._value(key, _is_text, "text", True)
        return None if value is None else str(value)

    def integer(self, key: str) -> int:
        return int(self._value(key, _is_integer, "a whole number", False))

    def opt_integer(self, key: str) -> int | None:
        value = self._value(key, _is_integer, "a whole number", True)
        return None if value is None else int(value)

    def number(self, key: str) -> float:
        value: float = self._value(key, _is_number, "a number", False)  # as printed: 10 stays 10
        return value

    def opt_number(self, key: str) -> float | None:
        value: float | None = self._value(key, _is_number, "a number", True)
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        value = self._value(key, _is_flag, "true or false", True)
        return default if value is None else bool(value)

    def obj(self, key: str) -> Obj:
        return Obj(self._value(key, _is_object, "an object", False), self._at(key))

    def opt_obj(self, key: str) -> Obj | None:
        """The object, or None when the key is missing, null or an empty object."""
        return self.obj(key) if self.has(key) else None

    def optional(self, key: str, read: Callable[[Obj], T]) -> T | None:
        """The object read by `read`, or None when the key is missing, null or an empty object."""
        found = self.opt_obj(key)
        return None if found is None else read(found)

    def items(self, key: str) -> list[tuple[str, object]]:
        """(place, item) of a list (a missing key or null: none)."""
        found = self._value(key, _is_list, "a list", True)
        return [] if found is None else _elements(self._at(key), found)

    def each(self, key: str, read: Callable[[Obj], T]) -> tuple[T, ...]:
        """A list of objects, each read by `read`."""
        return tuple(read(Obj(item, where)) for where, item in self.items(key))

    def texts(self, key: str) -> tuple[str, ...]:
        return tuple(_checked(where, item, _is_text, "text") for where, item in self.items(key))

    def numbers(self, key: str) -> tuple[float, ...]:
        return tuple(_checked(where, item, _is_number, "a number") for where, item in self.items(key))

    def integers(self, key: str) -> tuple[int, ...]:
        return tuple(_checked(where, item, _is_integer, "a whole number") for where, item in self.items(key))

    def nested(self, key: str, read: Callable[[Obj], T]) -> tuple[tuple[T, ...], ...]:
        """A list of lists of objects (each epoch's samples)."""
        return tuple(
            tuple(read(Obj(item, place)) for place, item in _elements(where, inner))
            for where, inner in self.items(key)
        )

    def nested_texts(self, key: str) -> tuple[tuple[str, ...], ...]:
        """A list of lists of text (each epoch's indices)."""
        return tuple(
            tuple(_checked(place, item, _is_text, "text") for place, item in _elements(where, inner))
            for where, inner in self.items(key)
        )

    def mapping(self, key: str, read: Callable[[Obj, str], T]) -> dict[str, T]:
        """An object whose values are read by `read(that object, key)`, in the order printed (no values when
        the key is missing or null)."""
        inner = self.obj(key) if self.printed(key) else Obj({}, self._at(key))
        return {name: read(inner, name) for name in inner._data}

    def text_map(self, key: str) -> dict[str, str]:
        return self.mapping(key, Obj.text)

    def number_map(self, key: str) -> dict[str, float]:
        return self.mapping(key, Obj.number)

    def plain(self) -> dict[str, Any]:
        """The object as printed, for a reader of its own (model.fingerprints_from)."""
        return self._data


def _elements(where: str, value: object) -> list[tuple[str, object]]:
    if not isinstance(value, list):
        raise Malformed(f"{where}: expected a list, got {_kind(value)}")
    return [(f"{where}[{i}]", item) for i, item in enumerate(value)]


def _checked(where: str, item: object, check: Callable[[object], bool], what: str) -> Any:
    if not check(item):
        raise Malformed(f"{where}: expected {what}, got {_kind(item)}")
    return item


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_flag(value: object) -> bool:
    return isinstance(value, bool)


def _is_object(value: object) -> bool:
    return isinstance(value, dict)


def _is_list(value: object) -> bool:
    return isinstance(value, list)
