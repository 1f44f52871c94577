"""The answer of `envguard sync` for an environment already in sync: what the last sync that found it so
printed, stored beside check's verdict (envguard.check.fast, envguard.cache.checks) and valid as long as that
verdict is: the environment's stat fingerprint and the lock's signature unchanged. So an in-sync environment
costs what an unchanged `envguard check` costs; nothing about the environment is read.

The stored answer is used only where the environment still records that it follows this very lock
(envguard.prefix.lockref's record names it): otherwise the full sync runs and records it.
"""

from __future__ import annotations

import os
from pathlib import Path

from envguard.check import fast
from envguard.prefix import lockref


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
    return fast.lookup(prefix, [lock], None, style_key(style, dry_run))


def follows(prefix: str, lock: str) -> bool:
    """Whether the environment's lock record (envguard.prefix.lockref) names this lock."""
    ref = lockref.recall(Path(prefix))
    return ref is not None and str(ref.lock) == os.path.realpath(lock)
