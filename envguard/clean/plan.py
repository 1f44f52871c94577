"""The pure core of `clean`: decide what goes (classify) and what that really frees (account).

Bytes are inode-deduplicated: each inode counts once, and a file frees space only when every one of its hard
links is inside the removed set (so a cache file hardlinked into an environment frees nothing). Directories
are counted by their own size. Both apparent bytes (`du --apparent-size`) and disk bytes (`du`) are reported.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from pathlib import Path

from envguard.clean.model import Candidate, Category, Entry, FileFact, Item, Usage
from envguard.errors import UsageError

# Partial downloads, temp folders, tarballs and extracted packages younger than this may belong to a running
# tool: conda 26 holds no lock while it extracts a tarball it has just downloaded (or links from the folder).
RECENT_SECONDS = 3600  # `--keep-recent 1h`; `0` keeps nothing back (the user knows no conda is running)
RECENT = "recent (a running conda may still be extracting or linking it)"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def keep_recent_seconds(text: str) -> float:
    """`--keep-recent`'s DURATION in seconds: `0`, or a number and a unit (`45s`, `30m`, `2h`, `1d`)."""
    value = text.strip()
    number, unit = (value[:-1], value[-1]) if value[-1:] in _UNITS else (value, "")
    try:
        seconds = float(number) * _UNITS[unit] if unit else (0.0 if float(number) == 0 else math.nan)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0 or not number.replace(".", "", 1).isdigit():
        raise UsageError(
            f"--keep-recent {text}: expected a duration such as 30m, 2h or 1d (s, m, h, d), or 0 to keep "
            "nothing back"
        )
    return seconds


def classify(
    entries: Sequence[Entry],
    usage: Usage,
    *,
    now: float,
    only: Collection[Category] = (),
    recent: float = RECENT_SECONDS,
) -> tuple[list[Candidate], dict[str, int]]:
    """Candidates for removal in entry order, and counts of what is kept, by reason."""
    extracted = {(e.cache.root, e.dist) for e in entries if e.kind == "package"}
    extracted |= {(e.cache.root, e.name) for e in entries if e.kind == "package"}
    candidates: list[Candidate] = []
    kept: dict[str, int] = {}

    def keep(reason: str) -> None:
        kept[reason] = kept.get(reason, 0) + 1

    for entry in entries:
        decision = _decide(entry, usage, extracted, now=now, recent=recent)
        if isinstance(decision, str):
            keep(decision)
        elif only and decision[0] not in only:
            keep(f"not selected ({decision[0]})")
        else:
            candidates.append(Candidate(entry, decision[0], decision[1]))
    return candidates, kept


def _decide(
    entry: Entry, usage: Usage, extracted: set[tuple[Path, str]], *, now: float, recent: float
) -> tuple[Category, str] | str:
    """(category, reason) to remove, or the reason to keep."""
    if entry.kind == "package":
        if usage.uses(entry.dist, entry.name):
            return "package in use"
        if not usage.complete:
            return "package kept: environment usage unknown"
        if now - entry.mtime < recent:
            return RECENT
        return ("unused-package", "no environment or lock references it")
    if entry.kind == "tarball" and now - entry.mtime < recent:
        return RECENT
    if entry.kind == "tarball":
        in_use = usage.uses(entry.dist, entry.dist)
        if not in_use:
            return (
                ("tarball", "package unused") if usage.complete else "tarball kept: environment usage unknown"
            )
        if (entry.cache.root, entry.dist) in extracted:
            return ("tarball", "package in use and already extracted")
        return "tarball of a package in use, not extracted"
    if entry.kind == "index":
        return ("index-cache", "repodata is downloaded again when needed")
    if entry.kind in ("partial", "temp"):
        if now - entry.mtime < recent:
            return "recent temporary file (a running download?)"
        if entry.kind == "partial":
            return ("partial-download", "interrupted download")
        return ("temp-log", "log or leftover temporary file")
    if entry.kind == "meta":
        return "cache metadata (urls.txt, lock files)"
    return "not a package, tarball or known cache file"


def account(measured: Sequence[tuple[Candidate, Sequence[FileFact]]]) -> list[Item]:
    """Items with the bytes removing all of `measured` together would free, attributed to the first item that
    holds each inode."""
    inside: dict[tuple[int, int], int] = {}
    for _candidate, facts in measured:
        for fact in facts:
            if not fact.is_dir:
                key = (fact.dev, fact.ino)
                inside[key] = inside.get(key, 0) + 1
    seen: set[tuple[int, int]] = set()
    items: list[Item] = []
    for candidate, facts in measured:
        size = blocks = elsewhere = 0
        for fact in facts:
            key = (fact.dev, fact.ino)
            if key in seen:
                continue
            seen.add(key)
            if fact.is_dir or inside[key] >= fact.nlink:
                size += fact.size
                blocks += fact.blocks
            else:
                elsewhere += 1
        entry = candidate.entry
        items.append(
            Item(
                category=candidate.category,
                cache=entry.cache.root,
                paths=tuple(map(Path, (entry.path, *entry.companions))),
                dist=entry.dist,
                reason=candidate.reason,
                bytes=size,
                disk_bytes=blocks * 512,
                linked_elsewhere=elsewhere,
            )
        )
    return items
