"""`envguard check`'s cache glue: the stored output of the last clean full check, when nothing it depends on
has changed, and remembering a finished check. Used by the click command and, before click is even imported,
by `envguard.launcher` for the common invocations."""

from __future__ import annotations

import os
import sys

from envguard.cache import checks as statcache
from envguard.errors import EXIT_OK

TYPE_CHECKING = False  # typing's constant (and collections.abc) would cost imports on the fast path
if TYPE_CHECKING:
    from collections.abc import Sequence

STYLES = ("human", "json", "markdown")


class FastArgs:
    """The subset of `envguard check` arguments the launcher understands without click (a plain class: the
    dataclasses module costs more to import than this whole fast path takes)."""

    __slots__ = ("envfile", "lock", "platform", "source", "style", "taken")

    def __init__(
        self, source: str | None, lock: str | None, envfile: str | None, platform: str | None, style: str
    ) -> None:
        self.source, self.lock, self.envfile, self.platform, self.style = (
            source,
            lock,
            envfile,
            platform,
            style,
        )
        self.taken: tuple[str, str] | None = None  # (prefix, stat fingerprint) looked up, for the full check


_VALUED = {"--lock": "lock", "-f": "envfile", "--file": "envfile", "--platform": "platform"}
_STYLE_FLAGS = {"--json": "json", "--markdown": "markdown"}


def parse_args(args: Sequence[str]) -> FastArgs | None:
    """`[SOURCE] [--lock F] [-f F] [--platform P] [--json | --markdown]`; None for anything else (click
    decides)."""
    values: dict[str, str] = {}
    style = "human"
    source: str | None = None
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if token in _VALUED and rest and not rest[0].startswith("-") and _VALUED[token] not in values:
            values[_VALUED[token]] = rest.pop(0)
        elif token in _STYLE_FLAGS and style == "human":
            style = _STYLE_FLAGS[token]
        elif not token.startswith("-") and source is None:
            source = token
        else:
            return None
    return FastArgs(source, values.get("lock"), values.get("envfile"), values.get("platform"), style)


def live_prefix(source: str | None) -> str | None:
    """The prefix a SOURCE names when that is decidable without envguard.sources (None otherwise)."""
    if source is None:
        from envguard.config import active_prefix

        return active_prefix()
    if source.startswith("name:"):
        return None
    path = os.path.expanduser(source)
    return path if os.path.isdir(path) else None


def inputs_of(lock: str | None, envfile: str | None) -> list[str]:
    return [p for p in (lock, envfile) if p]


def cached_output(prefix: str, inputs: list[str], platform: str | None, style: str) -> str | None:
    """The stored output in `style` when the last full check of exactly this was clean and nothing changed."""
    return lookup(prefix, inputs, platform, style)[0]


def lookup(prefix: str, inputs: list[str], platform: str | None, style: str) -> tuple[str | None, str]:
    """(the stored output or None, the stat fingerprint it was looked up with): a full check that follows a
    miss stores its verdict under that fingerprint instead of taking it again (taken before anything was
    read either way)."""
    text = statcache.material(prefix, inputs, {"platform": platform or ""})
    fingerprint = statcache.stat_fingerprint(prefix)
    outputs = statcache.lookup(text, statcache.inputs_signature(inputs), fingerprint)
    stored = outputs.get(style) if outputs else None
    return (stored if isinstance(stored, str) else None), fingerprint


def remember(
    prefix: str,
    inputs: list[str],
    platform: str | None,
    fingerprint: str,
    clean: bool,
    outputs: dict[str, str],
) -> None:
    """Store a full check's outputs (only when clean) under the fingerprint taken before it read anything."""
    text = statcache.material(prefix, inputs, {"platform": platform or ""})
    statcache.store(text, statcache.inputs_signature(inputs), fingerprint, clean, outputs)


def try_cached(parsed: FastArgs) -> int | None:
    """The launcher's fast path: print the cached output and return 0, or None to run the full command."""
    prefix = live_prefix(parsed.source)
    if prefix is None:
        return None
    lock = parsed.lock
    if lock is None and parsed.envfile is None:
        try:
            from envguard.check.discovery import find_lock

            lock = str(find_lock())
        except Exception:  # the full command reports a missing or broken configuration properly
            return None
    output, fingerprint = lookup(prefix, inputs_of(lock, parsed.envfile), parsed.platform, parsed.style)
    if output is None:
        parsed.taken = (prefix, fingerprint)
        return None
    sys.stdout.write(output)
    return EXIT_OK
