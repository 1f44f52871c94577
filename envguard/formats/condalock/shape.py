"""A conda-lock.yml in the exact shape `envguard lock` writes, read a whole `package:` entry at a time.

`load` reads the text as PyYAML's SafeLoader does: the part before `package:` (a few lines) with PyYAML's
loader, then each entry by one pattern (the keys in `package_entry`'s order, each value a one-word plain
scalar that resolves to a string, or a single-quoted one). Anything else anywhere (another key order, a flow
collection, a comment among the entries, a value YAML would read as a number) and the caller reads the whole
text with PyYAML's C loader. A 3,000-package lock: 135 ms here, ~3 s with CSafeLoader; tests hold this
reader to PyYAML on the same texts.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from envguard.formats.yaml import TYPED_STARTS, implicit_type, plain_text
from envguard.textio import load_yaml

# A value: a plain scalar without spaces or a leading indicator (it cannot end in `:`), or single-quoted.
_S = r"(?:[A-Za-z0-9_./][!-~]*+(?<!:)|'[^'\n\t]*+(?:''[^'\n\t]*+)*+')"
_K = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """An entry's pattern and a dependency line's, compiled on first use (~2 ms, not on every import)."""
    entry = re.compile(
        rf"""-\ name:\ ({_S})\n
      \ \ version:\ ({_S})\n
      \ \ manager:\ ({_S})\n
      \ \ platform:\ ({_S})\n
      \ \ dependencies:(?:\ \{{\}}\n|\n((?:\ {{4}}{_K}:\ {_S}\n)+))
      \ \ url:\ ({_S})\n
      \ \ hash:(?:\ \{{\}}\n|\n(?=\ {{4}})(?:\ {{4}}md5:\ ({_S})\n)?(?:\ {{4}}sha256:\ ({_S})\n)?)
      (?:\ \ build:\ ({_S})\n)?
      \ \ category:\ ({_S})\n
      \ \ optional:\ (false|true)\n""",
        re.VERBOSE,
    )
    return entry, re.compile(rf"    ({_K}): ({_S})\n")


_MARK = "\npackage:\n"
_BLOCKS = 1 << 16  # distinct dependency blocks and values remembered (bounded dicts)


class _Declined(Exception):
    """A value this reader does not read itself (one YAML would resolve to another type)."""


def load(text: str) -> Any:
    """The document of a lock's text, exactly as PyYAML's SafeLoader reads it; None where this reader does
    not read it (then PyYAML does)."""
    return _load(text)


def _load(text: str) -> dict[Any, Any] | None:
    cut = text.find(_MARK)
    if cut < 0:
        return None
    start = cut + len(_MARK)
    import yaml

    try:
        head = load_yaml(text[: cut + 1])
    except yaml.YAMLError:
        return None  # PyYAML reads the whole text again and reports the error where it is
    if head.__class__ is not dict or "package" in head or not plain_text(text[start:]):
        return None
    try:
        head["package"] = _entries(text, start)
    except _Declined:
        return None
    return head


def _entries(text: str, at: int) -> list[dict[str, Any]]:
    """Every entry from `at` to the end of the text, each matched where the last ended (else _Declined)."""
    match = _patterns()[0].match
    value = _Values()
    entries = []
    end = len(text)
    while at < end:
        found = match(text, at)
        if found is None:
            raise _Declined
        at = found.end()
        name, version, manager, platform, depends, url, md5, sha256, build, category, optional = (
            found.groups()
        )
        hashes = {}
        if md5 is not None:
            hashes["md5"] = value.once(md5)
        if sha256 is not None:
            hashes["sha256"] = value.once(sha256)
        entry: dict[str, Any] = {
            "name": value.once(name),
            "version": value.once(version),
            "manager": value.shared(manager),
            "platform": value.shared(platform),
            "dependencies": dict(value.dependencies(depends)) if depends else {},
            "url": value.once(url),
            "hash": hashes,
        }
        if build is not None:
            entry["build"] = value.once(build)
        entry["category"] = value.shared(category)
        entry["optional"] = optional == "true"
        entries.append(entry)
    return entries


class _Values:
    """Scalars as YAML reads them: a quoted one unquoted, a plain one as itself where it resolves to a string
    (else _Declined); the values that repeat (a platform, a dependency, a whole dependency block) are
    resolved once per lock."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        self.blocks: dict[str, list[tuple[str, str]]] = {}

    def dependencies(self, block: str) -> list[tuple[str, str]]:
        """A `dependencies:` block's (name, spec) pairs in its order (a later duplicate wins, as in YAML)."""
        pairs = self.blocks.get(block)
        if pairs is None:
            pairs = [(self.shared(k), self.shared(v)) for k, v in _patterns()[1].findall(block)]
            if len(self.blocks) < _BLOCKS:
                self.blocks[block] = pairs
        return pairs

    def shared(self, text: str) -> str:
        seen = self.seen.get(text)
        if seen is None:
            seen = self.once(text)
            if len(self.seen) < _BLOCKS:
                self.seen[text] = seen
        return seen

    @staticmethod
    def once(text: str) -> str:
        first = text[0]
        if first == "'":
            return text[1:-1].replace("''", "'")
        if first in TYPED_STARTS and implicit_type(text) is not None:
            raise _Declined
        return text
