"""The answer of `envguard sync` for an environment already in sync: what the last sync that found it so
printed, stored beside check's verdict (envguard.check.fast, envguard.cache.checks) and valid as long as that
verdict is: the environment's stat fingerprint and the lock's signature unchanged. So an in-sync environment
costs what an unchanged `envguard check` costs. Standard library only (os), like check's fast path; nothing
about the environment is read.

The stored answer is used only where the environment still records that it follows this very lock
(envguard.prefix.lockref's record names it): otherwise the full sync runs and records it.
"""

from __future__ import annotations

import os

from envguard.check import fast

# envguard.prefix.lockref.RECORD (imported there with json and dataclasses: too slow for this path; a test
# keeps the two equal)
RECORD = os.path.join("etc", "envguard", "lock.json")


def style_key(style: str, dry_run: bool) -> str:
    """The key sync's stored answers go under in check's cache entry (check's own are its style names)."""
    return f"sync-{style}{'-dry-run' if dry_run else ''}"


def answer(source: str | None, lock: str | None, style: str, dry_run: bool) -> str | None:
    """The stored in-sync answer, or None (the full sync decides)."""
    prefix = fast.live_prefix(source)
    if prefix is None:
        return None
    if lock is None:
        from envguard.check import find_lock  # pathlib and the config reader: only without --lock

        try:
            lock = str(find_lock())
        except Exception:
            return None
    if not follows(prefix, lock):
        return None
    stored, _fingerprint = fast.lookup(prefix, [lock], None, style_key(style, dry_run))
    return stored


def follows(prefix: str, lock: str) -> bool:
    """Whether the environment's lock record names this lock (read without json: the record is envguard's
    own one-key-per-line JSON, and anything else is a miss)."""
    try:
        with open(os.path.join(prefix, RECORD), encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, ValueError):
        return False
    wanted = os.path.realpath(lock)
    for line in text.splitlines():
        key, _, value = line.strip().partition(": ")
        if key == '"lock"':
            return value.rstrip(",") == _quoted(wanted)
    return False


def _quoted(text: str) -> str:
    """`text` as json.dumps writes it, for the plain paths this compares (anything unusual is a miss)."""
    if any(c in text for c in '"\\') or not text.isprintable() or not text.isascii():
        return "\0"  # never equal: the full sync handles such a path
    return f'"{text}"'
