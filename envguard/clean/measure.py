"""lstat everything under a path without following a symlink or entering another file system: the facts
`plan.account` turns into bytes.

A folder of another device, or any mount point (a bind mount of a folder elsewhere has the cache's own
st_dev, so /proc/self/mountinfo is read too), is never walked: the item holding it is left alone, because
moving it would carry the mount along and purging it would delete what is mounted."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from envguard.clean.model import FileFact


class Unreadable(Exception):
    """A folder inside could not be listed or a path could not be stat'ed; its bytes are unknown."""


class Mounted(Unreadable):
    """A mount point (another file system, or a bind mount) inside: nothing below it is clean's."""


def mount_points() -> frozenset[str]:
    """Every mount point of this process's mount namespace (Linux: /proc/self/mountinfo; elsewhere none:
    the st_dev comparison alone guards there)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return frozenset()
    found = set()
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:
            found.add(_unescape(fields[4]))
    return frozenset(found)


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in a path as octal escapes (`\\040`)."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def facts(paths: Iterable[str | Path], mounts: frozenset[str] | None = None) -> list[FileFact]:
    """FileFacts for each path and, for folders, everything below; raises Unreadable naming the first
    failure, Mounted naming the first mount point or other device inside (`mounts`: mount_points())."""
    points = mount_points() if mounts is None else mounts
    result: list[FileFact] = []
    for path in paths:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise Unreadable(f"{path}: cannot stat ({exc.strerror})") from exc
        if os.fspath(path) in points:
            raise Mounted(f"{path}: is a mount point")
        result.append(_fact(st))
        if stat.S_ISDIR(st.st_mode):
            _walk(os.fspath(path), st.st_dev, points, result)
    return result


def _fact(st: os.stat_result) -> FileFact:
    return FileFact(
        dev=st.st_dev,
        ino=st.st_ino,
        nlink=st.st_nlink,
        size=st.st_size,
        blocks=getattr(st, "st_blocks", (st.st_size + 511) // 512),
        is_dir=stat.S_ISDIR(st.st_mode),
    )


def _walk(top: str, device: int, points: frozenset[str], out: list[FileFact]) -> None:
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    st = entry.stat(follow_symlinks=False)
                    if st.st_dev != device or entry.path in points:
                        raise Mounted(f"{entry.path}: another file system is mounted there")
                    out.append(_fact(st))
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(entry.path)
        except Mounted:
            raise
        except OSError as exc:
            raise Unreadable(f"{exc.filename or folder}: cannot read ({exc.strerror})") from exc
