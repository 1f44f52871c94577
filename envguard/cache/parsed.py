"""Parsed input files remembered by their exact bytes: a lock or an environment.yml read again unchanged is
not parsed again (for `envguard check` and verify, PyYAML's construction of a whole conda-lock.yml).

Pays for: every `envguard check` that misses its stored verdict (the lock touched, the environment changed)
and `diff L L`: a 3,000-package conda-lock.yml is parsed in 82 ms of CPU by the lock-shape reader (~3 s by
PyYAML's C loader where that reader declines) and served in 18 ms, its bytes' SHA-256 included
(scripts/bench/bench_caches.py's lock).

An entry is the parsed Environment as msgspec encodes it, in envguard's cache (`parsed/<sha256>.json`,
private), named by the SHA-256 of the file's bytes and of everything else the parse depends on (what was
parsed, the file's name as messages quote it, the platform, envguard's version). An entry that does not load
back is a miss. A file holding a credential is parsed every time and never written here: a token in a channel
URL stays in the file it came from, and parsing it is what hands the credential to this process's memory
(channels.remember) for the solve and downloads that follow; a parse read back would not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import msgspec

from envguard.cache import entry, save
from envguard.channels import scrub
from envguard.errors import BadInputError
from envguard.model import Environment
from envguard.textio import decode, gc_paused
from envguard.validate import refuse_controls
from envguard.version import __version__

FORMAT = 4  # 4: the Environment as msgspec encodes it
_DECODER = msgspec.json.Decoder(Environment)


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
    """The entry's Environment (its names, versions and URLs held to what the readers accept); anything that
    does not decode as one is a miss."""
    try:
        with open(where, "rb") as handle:
            env = _DECODER.decode(handle.read())
        refuse_controls(env, origin)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, BadInputError):
        return None
    return env


@gc_paused()
def _store(where: str, env: Environment) -> None:
    text = msgspec.json.encode(env).decode("utf-8", "surrogateescape")
    if scrub(text) != text:  # a credential: never written to the cache
        return
    save(where, text)


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
