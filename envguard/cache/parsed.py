"""Parsed input files remembered by their exact bytes: a lock or an environment.yml read again unchanged is
not parsed again (for `envguard check` and verify, PyYAML's construction of a whole conda-lock.yml).

An entry is the parsed Environment in model.to_dict form, in envguard's cache (`parsed/<sha256>.json`,
private), named by the SHA-256 of the file's bytes and of everything else the parse depends on (what was
parsed, the file's name as messages quote it, the platform, envguard's version). An entry that does not
load back is a miss. A file holding a credential is parsed every time and never written here: a token in a
channel URL stays in the file it came from, and parsing it is what hands the credential to this process's
memory (channels.remember) for the solve and downloads that follow; a parse read back would not.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from envguard.cache import entry, save
from envguard.channels import scrub
from envguard.errors import BadInputError
from envguard.model import Environment, from_dict, to_dict
from envguard.textio import decode
from envguard.version import __version__

FORMAT = 2  # 2: names, versions and URLs with control characters are refused where read


def parsed(data: bytes, key: str, origin: str, parse: Callable[[], Environment]) -> Environment:
    """`parse()`'s Environment for a file of these exact bytes, from the cache when it was parsed before
    (`key`: what else the parse depends on)."""
    if _holds_credential(data):
        return parse()
    env = load(data, key, origin)
    if env is None:
        env = parse()
        store(data, key, origin, env)
    return env


def load(data: bytes, key: str, origin: str) -> Environment | None:
    """The remembered parse of these bytes, or None."""
    try:
        with open(_path(data, key, origin), "rb") as handle:
            document = json.loads(handle.read())
        return from_dict(document, origin=origin) if isinstance(document, dict) else None
    except (OSError, ValueError, BadInputError):
        return None


def store(data: bytes, key: str, origin: str, env: Environment) -> None:
    """Remember a parse (envguard.cache.save)."""
    text = json.dumps(to_dict(env))
    if scrub(text) != text:  # a credential: never written to the cache
        return
    save(_path(data, key, origin), text)


def _holds_credential(data: bytes) -> bool:
    """Whether the file's text has a URL with a credential in it (undecodable text counts: its parse says
    what is wrong with it)."""
    try:
        text = decode(data)
    except BadInputError:
        return True
    return scrub(text) != text


def _path(data: bytes, key: str, origin: str) -> str:
    """The entry's file: named by the bytes, what else the parse depends on and the name its messages quote
    (the same environment.yml in two folders warns with two paths)."""
    tail = f"\0{key}\0{origin}\0{__version__}\0{FORMAT}"
    digest = hashlib.sha256(data + tail.encode("utf-8", "surrogatepass"))
    return entry("parsed", f"{digest.hexdigest()}.json")
