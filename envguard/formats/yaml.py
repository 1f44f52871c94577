"""Write YAML scalars by hand, the way conda writes environment.yml: plain where YAML reads the text back
unchanged as a string, single-quoted otherwise (double-quoted for control characters)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]|: |\s#|:$")
# What YAML may carry unescaped (PyYAML's reader rejects the rest even inside quotes), as code point ranges:
# the same set as PyYAML's NON_PRINTABLE pattern, whose compilation alone costs ~10 ms per process.
_PRINTABLE = ((0x20, 0x7E), (0xA0, 0xD7FF), (0xE000, 0xFFFD), (0x10000, 0x10FFFF))
_PRINTABLE_CONTROLS = frozenset((0x09, 0x0A, 0x0D, 0x85))


@lru_cache(maxsize=65536)
def scalar(text: str) -> str:
    """`numpy=1.26.4` stays plain; `yes`, `1.0`, `a: b`, `#x` and `@x` get quotes. Memoised: a lock repeats
    its keys and dependency names (a 3,000-package lock: 87,000 calls, 15,000 distinct texts)."""
    if _plain_ok(text):
        return text
    if any(_needs_escape(c) for c in text):
        return _double_quoted(text)
    return "'" + text.replace("'", "''") + "'"


def _double_quoted(text: str) -> str:
    out = []
    for char in text:
        code = ord(char)
        if char in '\\"':
            out.append("\\" + char)
        elif not _needs_escape(char):
            out.append(char)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _needs_escape(char: str) -> bool:
    """Control characters, YAML line breaks, a BOM and whatever YAML cannot carry raw."""
    return char < " " or char in "\x7f\x85\u2028\u2029\ufeff" or not printable(char)


def printable(char: str) -> bool:
    """Whether YAML may carry the character unescaped (YAML 1.1 `c-printable`)."""
    code = ord(char)
    return code in _PRINTABLE_CONTROLS or any(low <= code <= high for low, high in _PRINTABLE)


def _plain_ok(text: str) -> bool:
    if not text or text != text.strip() or _UNSAFE.search(text):
        return False
    first = text[0]
    if first in _INDICATORS and not (first in "-?:" and len(text) > 1 and not text[1].isspace()):
        return False
    return _resolves_to_str(text)


def _resolves_to_str(text: str) -> bool:
    """True when YAML would not read the plain text as a bool, number, null, date or `=`."""
    return implicit_type(text) is None


# YAML 1.1's implicit types as PyYAML's SafeLoader resolves plain scalars (tests hold this to its Resolver
# on every text they generate): the words by exact match, numbers and dates by a pattern per type.
_BOOLS = ("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE")
_WORDS = {
    **dict.fromkeys((*_BOOLS, "on", "On", "ON", "off", "Off", "OFF"), "bool"),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), "null"),
    "<<": "merge",
    "=": "value",
    **dict.fromkeys("!&*", "yaml"),
}
_NUMERIC_START = frozenset("-+.0123456789")
TYPED_STARTS = _NUMERIC_START | {
    word[0] for word in _WORDS if word
}  # a plain scalar starting otherwise is text


def implicit_type(text: str) -> str | None:
    """The YAML 1.1 type a plain scalar without surrounding white space resolves to (`bool`, `int`,
    `float`, `null`, `timestamp`, `merge`, `value`, `yaml`), or None for a string."""
    word = _WORDS.get(text)
    if word is not None or not text or text[0] not in _NUMERIC_START:
        return word
    dots = text.count(".")
    if dots > 1:
        return None  # a number or a date has one `.` at most: `1.26.4` is a string
    if text[4:5] == "-" and _pattern("timestamp").fullmatch(text):  # a date starts with four digits and `-`
        return "timestamp"
    if dots:
        return "float" if _pattern("float").fullmatch(text) else None  # every float has its `.`
    body = text[1:] if text[0] in "+-" else text
    if body[:2] not in ("0x", "0b") and body.strip("0123456789_:"):
        return None  # not digits (a sha256 is a string without reading a pattern)
    return "int" if _pattern("int").fullmatch(text) else None


@cache
def _pattern(kind: str) -> re.Pattern[str]:
    """One type's pattern, compiled on first use (the three at once cost ~1 ms a process)."""
    # ASCII digits only ([0-9], never \d: "١٢" is a string); `_` may separate digits; `:` makes base 60
    # (1:30 is 90).
    digits, exponent, base60 = "[0-9][0-9_]*", "(?:[eE][-+][0-9]+)?", "(?::[0-5]?[0-9])+"
    time = "[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]*)?(?:[ \\t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?"
    patterns = {
        "float": f"[-+]?(?:{digits}\\.[0-9_]*{exponent}|{digits}{base60}\\.[0-9_]*|\\.(?:inf|Inf|INF))"
        f"|\\.[0-9][0-9_]*{exponent}|\\.(?:nan|NaN|NAN)",
        "int": "[-+]?(?:0b[01_]+|0[0-7_]+|0|[1-9][0-9_]*(?::[0-5]?[0-9])*|0x[0-9a-fA-F_]+)",
        "timestamp": f"[0-9]{{4}}-(?:[0-9]{{2}}-[0-9]{{2}}|[0-9]{{1,2}}-[0-9]{{1,2}}(?:[Tt]|[ \\t]+){time})",
    }
    return re.compile(patterns[kind])


def dump(document: Mapping[str, Any]) -> str:
    """Block-style YAML for plain data (mappings, lists, str, int, bool, None), laid out as PyYAML's
    `default_flow_style=False` lays it out (lists at their key's indent), without PyYAML's Python representer:
    a 300-package conda-lock.yml renders in a few ms instead of ~100."""
    lines: list[str] = []
    _mapping(document, 0, lines)
    return "\n".join(lines) + "\n"


def _mapping(mapping: Mapping[str, Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for key, value in mapping.items():
        name = scalar(str(key))
        if type(value) is str:  # most values: skip the abstract-class checks (a third of a lock's rendering)
            lines.append(f"{pad}{name}: {scalar(value)}")
        elif isinstance(value, Mapping) and value:
            lines.append(f"{pad}{name}:")
            _mapping(value, indent + 2, lines)
        elif isinstance(value, list | tuple) and value:
            lines.append(f"{pad}{name}:")
            _sequence(value, indent, lines)
        else:
            lines.append(f"{pad}{name}: {_inline(value)}")


def _sequence(items: Sequence[Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if type(item) is str:
            lines.append(f"{pad}- {scalar(item)}")
        elif isinstance(item, Mapping) and item:
            nested: list[str] = []
            _mapping(item, indent + 2, nested)
            nested[0] = f"{pad}- {nested[0][indent + 2 :]}"
            lines.extend(nested)
        elif isinstance(item, list | tuple) and item:
            raise TypeError("nested sequences are not used in envguard's YAML files")
        else:
            lines.append(f"{pad}- {_inline(item)}")


def _inline(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return scalar(str(value))


_YAML_BYTES = bytes([0x09, 0x0A, *range(0x20, 0x7F)])


def plain_text(text: str) -> bool:
    """No character PyYAML refuses, reads as a line break (NEL, U+2028/2029) or strips (a BOM)."""
    if text.isascii():
        return not text.encode("ascii").translate(None, _YAML_BYTES)
    return not any(c in text for c in "\x85\u2028\u2029\ufeff\r") and all(map(printable, set(text)))
