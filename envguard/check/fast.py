"""The answer of `envguard check` for an environment unchanged since its last clean full check: the stored
output (envguard.cache.checks), decided from file metadata alone. It runs before anything else is imported
(standard library os only: no dataclasses, json, click or envguard model), for the plain forms whose SOURCE
is a folder or the active environment."""

from __future__ import annotations

import os

from envguard.cache import checks
from envguard.config import active_prefix
from envguard.terminal import line_width

TYPE_CHECKING = False  # typing's constant (and collections.abc) would cost imports on the fast path
if TYPE_CHECKING:
    from collections.abc import Sequence


def live_prefix(source: str | None) -> str | None:
    """The prefix a SOURCE names when that is decidable without envguard.sources (None otherwise)."""
    if source is None:
        try:
            source = active_prefix()
        except Exception:
            return None  # a broken [tool.envguard] environment: the full check says what is wrong
        if source is None:
            return None  # nothing meant: the full check says how to name one
    if source.startswith("name:"):
        return None
    path = os.path.expanduser(source)
    return path if os.path.isdir(path) else None


def inputs_of(lock: str | None, envfile: str | None) -> list[str]:
    return [p for p in (lock, envfile) if p]


def lookup(prefix: str, inputs: Sequence[str], platform: str | None, style: str) -> str | None:
    """The stored output in this style, or None."""
    text = checks.material(prefix, inputs, {"platform": platform or ""})
    outputs = checks.lookup(text, checks.inputs_signature(inputs), checks.stat_fingerprint(prefix))
    if not outputs:
        return None
    stored = outputs.get(style)
    width = line_width() if "human" in style else None  # a human view fits the terminal; JSON is whole
    if width is not None:
        wrapped = outputs.get(f"{style}@{width}")  # stored as wrapped at this width
        if isinstance(wrapped, str):
            return wrapped
        if isinstance(stored, str) and any(len(line) > width for line in stored.splitlines()):
            return None  # wider than this terminal: the full check wraps it (and stores it so)
    return stored if isinstance(stored, str) else None


def remember(
    prefix: str,
    inputs: Sequence[str],
    platform: str | None,
    fingerprint: str,
    clean: bool,
    outputs: dict[str, str],
) -> None:
    """Store a full check's outputs (only when clean) under the fingerprint taken before it read anything."""
    text = checks.material(prefix, inputs, {"platform": platform or ""})
    checks.store(text, checks.inputs_signature(inputs), fingerprint, clean, outputs)


def answer(
    source: str | None, lock: str | None, envfile: str | None, platform: str | None, style: str
) -> tuple[str | None, bool]:
    """(the stored output, True) when nothing changed; (None, True) for a miss (the full check need not look
    again: CheckOptions.looked_up); (None, False) where this cannot decide the prefix or the lock (the full
    check reports a missing or broken configuration properly)."""
    prefix = live_prefix(source)
    if prefix is None:
        return None, False
    if lock is None and envfile is None:
        from envguard.check.discovery import find_lock  # pathlib and the config reader: only without --lock

        try:
            lock = str(find_lock())
        except Exception:
            return None, False
    return lookup(prefix, inputs_of(lock, envfile), platform, style), True
