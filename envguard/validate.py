"""The one validation layer for values read from JSON/YAML into envguard's model: each field's type is checked
where a file is read, and a wrong one is bad input (exit 2) naming the file and the field, never a crash
further down."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from itertools import chain
from operator import attrgetter
from typing import Any, Literal

from envguard.errors import BadInputError
from envguard.textio import control_problem

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


_STR = {str}
_INT_BOUND = 10**MAX_INT_DIGITS  # what matches(value, "int") accepts: at most MAX_INT_DIGITS digits


def check_fields(data: Mapping[str, Any], schema: Mapping[str, Kind], origin: object, fix: str) -> None:
    """Raise BadInputError naming `origin` and the first field of `schema` present in `data` (and not None)
    whose value has the wrong type."""
    get = data.get
    for key, kind in schema.items():
        value = get(key)
        if value is None:
            continue
        # the common cases without a call (a 100,000-record prefix checks 2,000,000 fields, 300,000 lists)
        kept = value.__class__
        if kept is str:
            if kind == "str":
                continue
        elif kept is list:
            if kind == "list[str]" and (not value or set(map(type, value)) == _STR):
                continue
        elif kept is dict:
            if kind == "dict":
                continue
        elif kept is int and kind == "int" and -_INT_BOUND < value < _INT_BOUND:
            continue
        if not matches(value, kind):
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


# --- package identities (conda: CEP 26, "Identifying Packages and Channels in the conda Ecosystem") ------
# A name, version or build read from a lock becomes part of a path (conda-meta/NAME-VERSION-BUILD.json, the
# package cache's NAME-VERSION-BUILD folder): anything outside conda's own rules is refused where it is read.

MAX_IDENTITY_LENGTH = 64
_CONDA_NAME = re.compile(r"(?:[a-z0-9]|[a-z0-9_](?!_))[._-]?(?:[a-z0-9]+(?:[._-]|$))*", re.IGNORECASE)
_VIRTUAL_NAME = re.compile(r"__[a-z0-9][._-]?(?:[a-z0-9]+(?:[._-]|$))*", re.IGNORECASE)
_CONDA_VERSION = re.compile(r"[0-9a-z._+!]+", re.IGNORECASE)  # conda compares versions case-insensitively
_CONDA_BUILD = re.compile(r"[A-Za-z0-9_.+]+")
_PIP_NAME = re.compile(r"[A-Z0-9](?:[A-Z0-9._-]*[A-Z0-9])?", re.IGNORECASE)  # PEP 508
_PIP_VERSION = re.compile(r"[A-Za-z0-9._+!-]*")  # PEP 440 and the legacy forms pip still lists
_ARCHIVE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+!-]*\.(?:conda|tar\.bz2|whl|tar\.gz|zip)")


def identity_problem(manager: str, name: str, version: str, build: str = "") -> str | None:
    """Why a package's name, version or build breaks conda's rules (CEP 26; PEP 508/440 for pip), or None."""
    if manager == "pip":
        if not _PIP_NAME.fullmatch(name) or len(name) > 2 * MAX_IDENTITY_LENGTH:
            return f"{_shown(name)} is not a Python package name (PEP 508)"
        if not _PIP_VERSION.fullmatch(version) or len(version) > 2 * MAX_IDENTITY_LENGTH:
            return f"{_shown(name)}: {_shown(version)} is not a package version"
        return None
    if not (_CONDA_NAME.fullmatch(name) or _VIRTUAL_NAME.fullmatch(name)) or len(name) > MAX_IDENTITY_LENGTH:
        return f"{_shown(name)} is not a conda package name (ASCII letters, digits, `.`, `-`, `_`)"
    if not _CONDA_VERSION.fullmatch(version) or len(version) > MAX_IDENTITY_LENGTH:
        return f"{name}: {_shown(version)} is not a conda version (ASCII letters, digits, `._+!`)"
    if build and (not _CONDA_BUILD.fullmatch(build) or len(build) > MAX_IDENTITY_LENGTH):
        return f"{name} {version}: {_shown(build)} is not a conda build string (ASCII letters, digits, `._+`)"
    return None


def archive_name_problem(manager: str, filename: str, name: str, version: str, build: str) -> str | None:
    """Why the file name of a package's archive (the last part of its URL, and its name in the package cache)
    is not an archive of exactly that package, or None."""
    if not _ARCHIVE.fullmatch(filename) or len(filename) > 255:
        return f"{name} {version}: {_shown(filename)} is not a package archive's file name"
    if (
        manager == "conda"
        and filename.rsplit(".tar.bz2", 1)[0].rsplit(".conda", 1)[0] != f"{name}-{version}-{build}"
    ):
        return f"{name} {version} {build}: its URL names another archive ({_shown(filename)})"
    return None


def _shown(value: str) -> str:
    """A refused value as it may appear in a message: repr (escapes every control character), clipped."""
    return repr(value if len(value) <= 80 else value[:79] + "…")


# --- control characters -------------------------------------------------------------------------------


def refuse_controls(env: Any, where: str | None = None) -> None:
    """Bad input (exit 2, one line naming the file and the entry) when a name, version, build, channel, URL,
    hash, dependency or spec of `env` (an envguard.model.Environment; validate sits below the model) holds a
    control or bidi character: each reaches terminals and commands a person pastes (a line break in a name
    forged a "How to fix" line). One scan of all the text; the culprit is looked for only when there is one.
    A live environment's name is its folder's (not refused)."""
    packages = env.packages
    scanned = chain(
        (text for _, _, text in _environment_texts(env)),
        chain.from_iterable(map(_PACKAGE_TEXT, packages)),
        chain.from_iterable(p.depends for p in packages),
        chain.from_iterable(_ORIGIN_TEXT(p.origin) for p in packages if p.origin is not None),
    )
    if control_problem(" ".join(scanned)) is None:
        return
    texts = chain(
        _environment_texts(env),
        ((f"package {p.name[:60]!r} ({p.manager})", k, v) for p in packages for k, v in _package_texts(p)),
    )
    entry, key, value = next(t for t in texts if control_problem(t[2]) is not None)
    raise BadInputError(
        f"{where or env.source or env.prefix or '<input>'}: {entry}: its {key} {control_problem(value)} "
        f"({value[:60]!r}); names, versions, channels, URLs and specs must be plain text (they reach "
        "terminals and pasted commands): fix or re-create the file"
    )


_PACKAGE_FIELDS_SHOWN = ("name", "version", "build", "channel", "subdir", "url", "md5", "sha256", "installer")
ORIGIN_FIELDS_SHOWN = ("url", "vcs", "commit_id", "requested_revision")
_PACKAGE_TEXT = attrgetter(*_PACKAGE_FIELDS_SHOWN)
_ORIGIN_TEXT = attrgetter(*ORIGIN_FIELDS_SHOWN)


def _environment_texts(env: Any) -> Iterator[tuple[str, str, str]]:
    named = env.name if env.kind not in ("prefix", "venv") else ""
    yield from (("the environment", k, v or "") for k, v in (("name", named), ("platform", env.platform)))
    for text in (*env.channels, *env.pip_options, *env.platforms):
        yield "the environment", "channels or options", text
    yield from (("a requested spec", "text", r.spec) for r in env.requested)
    for v in env.virtual_packages:
        yield from (("a virtual package", "text", t) for t in (v.name, v.version, v.build))


def _package_texts(p: Any) -> list[tuple[str, str]]:
    origin = zip(ORIGIN_FIELDS_SHOWN, _ORIGIN_TEXT(p.origin), strict=True) if p.origin is not None else ()
    return [
        *zip(_PACKAGE_FIELDS_SHOWN, _PACKAGE_TEXT(p), strict=True),
        *(("dependency", d) for d in p.depends),
        *((f"origin {k}", v) for k, v in origin),
    ]
