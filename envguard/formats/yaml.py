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


# --- reading the block style this module writes ---------------------------------------------------------


class _Declined(Exception):
    """The text holds something `load_block` does not read itself: PyYAML reads it."""


def load_block(text: str) -> Any:
    """The document of a block-style YAML text, exactly as PyYAML's SafeLoader reads it, for the shapes `dump`
    and conda-lock write (mappings and lists by indentation, plain and quoted one-line scalars, `{}`, `[]`,
    whole-line comments); None for anything else (flow collections, anchors and tags, multi-line or block
    scalars, escapes in double quotes, trailing comments, tabs, other line breaks, characters YAML refuses,
    several documents, an error), which the caller then reads with PyYAML. About nine times PyYAML's C
    parser with its Python constructor (a 20,000-package conda-lock.yml: 0.8 s instead of 7 s of CPU);
    tests hold it to PyYAML on every text they make."""
    if not plain_text(text):
        return None
    try:
        return _load(text)
    except _Declined:
        return None


_YAML_BYTES = bytes([0x09, 0x0A, *range(0x20, 0x7F)])


def plain_text(text: str) -> bool:
    """No character PyYAML refuses, reads as a line break (NEL, U+2028/2029) or strips (a BOM)."""
    if text.isascii():
        return not text.encode("ascii").translate(None, _YAML_BYTES)
    return not any(c in text for c in "\x85\u2028\u2029\ufeff\r") and all(map(printable, set(text)))


# A line's parse, by its text: (indent, is a list item, the indent of the mapping an item opens (-1: none),
# key, value, state). Lines repeat across a lock's entries (`  manager: conda`, `  hash:`, a common
# dependency), so each distinct line is parsed once (up to _MEMO of them: a bounded dict, not one per line).
_Line = tuple[int, bool, int, Any, Any, int]
_VALUE, _PENDING, _FRESH, _ERROR = 0, 1, 2, 3  # the value as is; a `key:` alone; a new {} or []; raise it
_SKIP: _Line = (0, False, -1, None, None, -1)  # a blank or comment line
_MEMO = 1 << 16
_KEYS: dict[str, Any] = {}  # a key's text -> the key (a lock has a few dozen)


def _load(text: str) -> Any:
    root: Any = None
    stack: list[tuple[int, Any, bool]] = []  # (indent of the container's items, the container, is a list)
    pending: tuple[dict[Any, Any], Any, int] | None = None  # a `key:` whose value is on the next lines
    memo: dict[str, _Line] = {}
    for line in text.split("\n"):
        parsed = memo.get(line)
        if parsed is None:
            parsed = _line(line)
            if len(memo) < _MEMO:
                memo[line] = parsed
        if parsed is _SKIP:
            continue
        indent, item, inner, key, value, state = parsed
        if pending is not None:
            mapping, pending_key, at = pending
            pending = None
            if (item and indent >= at) or (not item and indent > at):
                opened: Any = [] if item else {}
                mapping[pending_key] = opened
                stack.append((indent, opened, item))
            else:
                mapping[pending_key] = None
        if root is None:
            root = [] if item else {}
            stack.append((indent, root, item))
        while stack and (stack[-1][0] > indent or (stack[-1][0] == indent and not item and stack[-1][2])):
            stack.pop()
        if not stack or stack[-1][0] != indent or stack[-1][2] != item:
            raise _Declined
        if state == _ERROR:
            raise value  # where the line-by-line reading met it: after the structure was found sound
        if state == _FRESH:
            value = value()
        container = stack[-1][1]
        if item:
            if inner < 0:
                container.append(value)
                continue
            container.append(opened := {})
            stack.append((inner, opened, False))
            container, indent = opened, inner
        if state == _PENDING:
            pending = (container, key, indent)
        else:
            container[key] = value
    if pending is not None:
        pending[0][pending[1]] = None
    if root is None:
        raise _Declined
    return root


# `  key: value` or `- key: value` with an ASCII key and a one-word ASCII value (a URL, a hash, a version):
# read without the general steps when the key is known and the value resolves to a string (else: those steps).
_SIMPLE = re.compile(r"( *)(- )?([A-Za-z_][A-Za-z0-9_.-]*): ([A-Za-z0-9_./][!-~]*(?<!:))")


def _line(line: str) -> _Line:
    """One line read alone: _SKIP, or what `_load` places (raises _Declined for what it does not read)."""
    simple = _SIMPLE.fullmatch(line)
    if simple is not None:
        spaces, dash, key, value = simple.groups()
        name = _KEYS.get(key, _KEYS)
        if name is not _KEYS and implicit_type(value) is None:
            indent = len(spaces)
            return (
                (indent, True, indent + 2, name, value, _VALUE)
                if dash
                else (indent, False, -1, name, value, _VALUE)
            )
    content = line.lstrip(" ")
    if not content or content[0] == "#":
        return _SKIP
    indent = len(line) - len(content)
    content = content.rstrip(" ")
    if "\t" in content or "\r" in content or content[:3] in ("---", "...") or content[0] == "%":
        raise _Declined
    item = content[:2] == "- " or content == "-"
    inner = -1
    try:
        if item:
            body = content[2:].lstrip(" ")
            if not body or body[:2] == "- ":
                raise _Declined
            if body[0] in "'\"" or not (": " in body or body[-1] == ":"):
                return _placed(indent, True, -1, None, _scalar(body))
            inner = len(content) - len(body) + indent
            content = body
        return _entry(indent, item, inner, content)
    except _Declined:
        raise
    except Exception as exc:  # e.g. a date PyYAML's constructor refuses: raised where the loop reaches it
        return (indent, item, inner, None, exc, _ERROR)


def _entry(indent: int, item: bool, inner: int, content: str) -> _Line:
    """`key: value`, or a `key:` alone (pending: its value follows on the next lines)."""
    if content[-1] == ":" and ": " not in content:
        key, value = content[:-1], ""
    else:
        key, sep, value = content.partition(": ")
        if not sep:
            raise _Declined
    name = _KEYS.get(key, _KEYS)
    if name is _KEYS:
        if not key or key[0] in "'\"?" or key != key.rstrip(" "):
            raise _Declined
        name = _scalar(key)
        if isinstance(name, dict | list):
            raise _Declined
        if len(_KEYS) < _MEMO:
            _KEYS[key] = name
    value = value.lstrip(" ")
    if not value:
        return (indent, item, inner, name, None, _PENDING)
    return _placed(indent, item, inner, name, _scalar(value))


def _placed(indent: int, item: bool, inner: int, key: Any, value: Any) -> _Line:
    if value.__class__ is dict or value.__class__ is list:  # `{}`, `[]`: a new one each time it is placed
        return (indent, item, inner, key, value.__class__, _FRESH)
    return (indent, item, inner, key, value, _VALUE)


_SPECIAL = frozenset("[]{},#&*!|>%@`")


def _scalar(text: str) -> Any:
    """One-line scalar: quoted, `{}`/`[]`, or plain (resolved as YAML 1.1 resolves it)."""
    first = text[0]
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise _Declined
        return inner.replace("''", "'")
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise _Declined
        return inner
    if text == "{}":
        return {}
    if text == "[]":
        return []
    if first in _SPECIAL or " #" in text or ": " in text or text[-1] == ":":
        raise _Declined
    if first in "-?:" and (len(text) == 1 or text[1] == " "):
        raise _Declined
    kind = implicit_type(text)
    return text if kind is None else _typed(kind, text)


_TYPED: dict[str, Any] = {"true": True, "false": False, "null": None, "~": None}


def _typed(kind: str, text: str) -> Any:
    """A plain scalar that is not a string, built by PyYAML's own SafeConstructor (memoised: a lock repeats
    `false` and `1`)."""
    if text in _TYPED:
        return _TYPED[text]
    if kind == "bool":
        return text.lower() in ("yes", "true", "on")
    if kind == "null":
        return None
    if kind == "int" and text.isdigit() and (text[0] != "0" or text == "0"):
        return int(text)
    if kind not in ("int", "float", "timestamp"):
        raise _Declined
    import yaml

    node = yaml.ScalarNode(f"tag:yaml.org,2002:{kind}", text)
    value = yaml.constructor.SafeConstructor().construct_object(node)
    if len(_TYPED) < 4096:
        _TYPED[text] = value
    return value
