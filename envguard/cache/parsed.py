"""Parsed input files remembered by their exact bytes: a lock or an environment.yml read again unchanged is
not parsed again (for `envguard check` and verify, PyYAML's construction of a whole conda-lock.yml).

An entry is the parsed Environment in model.to_dict form with its packages as rows (a JSON list of a Package's
fields each: a 100,000-package lock's entry is written in ~0.5 s and read back in ~1.4 s, where the snapshot
form took ~3 s and ~5 s), in envguard's cache (`parsed/<sha256>.json`, private), named by the SHA-256 of the
file's bytes and of everything else the parse depends on (what was parsed, the file's name as messages quote
it, the platform, envguard's version). An entry that does not load back is a miss. A file holding a credential
is parsed every time and never written here: a token in a channel URL stays in the file it came from, and
parsing it is what hands the credential to this process's memory (channels.remember) for the solve and
downloads that follow; a parse read back would not.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from operator import attrgetter, itemgetter
from typing import Any

from envguard.cache import entry, save
from envguard.channels import scrub
from envguard.errors import BadInputError
from envguard.model import Environment, Package, PipOrigin, from_dict, to_dict
from envguard.textio import decode, gc_paused
from envguard.validate import MAX_INT_DIGITS, refuse_controls
from envguard.version import __version__

FORMAT = 3  # 2: names, versions and URLs with control characters are refused where read; 3: package rows
_FIELDS = tuple(f.name for f in dataclasses.fields(Package))
_ROW = attrgetter(*_FIELDS)
_ORIGIN = _FIELDS.index("origin")
_TEXT = itemgetter(*(i for i, f in enumerate(dataclasses.fields(Package)) if f.type in ("str", "Manager")))
_ORIGIN_KINDS = {f.name: bool if f.type == "bool" else str for f in dataclasses.fields(PipOrigin)}


@gc_paused()
def parsed(data: bytes, key: str, origin: str, parse: Callable[[], Environment]) -> Environment:
    """`parse()`'s Environment for a file of these exact bytes, from the cache when it was parsed before
    (`key`: what else the parse depends on)."""
    if _holds_credential(data):
        return parse()
    where = _path(data, key, origin)  # the bytes hashed once (49 MB for a 100,000-package lock)
    env = _load(where, origin)
    if env is None:
        env = parse()
        _store(where, env)
    return env


def load(data: bytes, key: str, origin: str) -> Environment | None:
    """The remembered parse of these bytes, or None."""
    return _load(_path(data, key, origin), origin)


def store(data: bytes, key: str, origin: str, env: Environment) -> None:
    """Remember a parse (envguard.cache.save)."""
    _store(_path(data, key, origin), env)


@gc_paused()
def _load(where: str, origin: str) -> Environment | None:
    try:
        with open(where, "rb") as handle:
            document = json.loads(handle.read())
        return _decoded(document, origin) if isinstance(document, dict) else None
    except (OSError, ValueError, TypeError, BadInputError):
        return None


@gc_paused()
def _store(where: str, env: Environment) -> None:
    document = to_dict(dataclasses.replace(env, packages=()))
    document["package_rows"] = [_row(p) for p in env.packages]
    text = json.dumps(document, check_circular=False)  # plain data: no container inside itself
    if scrub(text) != text:  # a credential: never written to the cache
        return
    save(where, text)


def _row(package: Package) -> Any:
    """A Package as the list of its fields' values (its origin as a mapping)."""
    row = _ROW(package)
    if package.origin is None:
        return row
    return (*row[:_ORIGIN], dataclasses.asdict(package.origin), *row[_ORIGIN + 1 :])


def _decoded(document: dict[str, Any], origin: str) -> Environment:
    """An entry's Environment; a row of the wrong shape or type is a ValueError or TypeError (a miss)."""
    rows = document.pop("package_rows", None)
    if not isinstance(rows, list):
        raise ValueError("package_rows must be a list")
    env = from_dict(document, origin=origin)  # every other field checked as a snapshot's
    env = dataclasses.replace(env, packages=tuple(map(_package, rows)))
    refuse_controls(env, origin)
    return env


_BOUND = 10**MAX_INT_DIGITS


def _package(row: Any) -> Package:
    if row.__class__ is not list or len(row) != len(_FIELDS):
        raise ValueError("a package row has the wrong shape")
    "".join(_TEXT(row))  # TypeError unless every text field is text
    manager, name, version, build, number, channel, subdir, url, md5, sha256, installer, found, depends = row
    if manager not in ("conda", "pip") or number.__class__ is not int or not -_BOUND < number < _BOUND:
        raise ValueError("a package row's manager or build number is wrong")
    if depends.__class__ is not list:
        raise ValueError("a package row's depends is not a list")
    "".join(depends)
    if found is not None:
        if found.__class__ is not dict or any(
            _ORIGIN_KINDS.get(k) is not v.__class__ for k, v in found.items()
        ):
            raise ValueError("a package row's origin is malformed")
        found = PipOrigin(**found)
    return Package(
        manager=manager,
        name=name,
        version=version,
        build=build,
        build_number=number,
        channel=channel,
        subdir=subdir,
        url=url,
        md5=md5,
        sha256=sha256,
        installer=installer,
        origin=found,
        depends=tuple(depends),
    )


def _holds_credential(data: bytes) -> bool:
    """Whether the file's text has a URL with a credential in it (undecodable text counts: its parse says
    what is wrong with it)."""
    if data.isascii() and (b"://" not in data or (b"@" not in data and b"/t/" not in data)):
        return False  # scrub's own first test, on the bytes: a 49 MB lock is not decoded for it
    try:
        text = decode(data)
    except BadInputError:
        return True
    return scrub(text) != text


def _path(data: bytes, key: str, origin: str) -> str:
    """The entry's file: named by the bytes, what else the parse depends on and the name its messages quote
    (the same environment.yml in two folders warns with two paths)."""
    tail = f"\0{key}\0{origin}\0{__version__}\0{FORMAT}"
    digest = hashlib.sha256(data)  # then the tail: the digest of data + tail, without a copy of the data
    digest.update(tail.encode("utf-8", "surrogatepass"))
    return entry("parsed", f"{digest.hexdigest()}.json")
