"""lstat everything under a path without following a symlink: the facts `plan.account` turns into bytes."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from envguard.clean.model import FileFact


class Unreadable(Exception):
    """A folder inside could not be listed or a path could not be stat'ed; its bytes are unknown."""


def facts(paths: Iterable[str | Path]) -> list[FileFact]:
    """FileFacts for each path and, for folders, everything below; raises Unreadable naming the first
    failure."""
    result: list[FileFact] = []
    for path in paths:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise Unreadable(f"{path}: cannot stat ({exc.strerror})") from exc
        result.append(_fact(st))
        if stat.S_ISDIR(st.st_mode):
            _walk(os.fspath(path), result)
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


def _walk(top: str, out: list[FileFact]) -> None:
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    st = entry.stat(follow_symlinks=False)
                    out.append(_fact(st))
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(entry.path)
        except OSError as exc:
            raise Unreadable(f"{exc.filename or folder}: cannot read ({exc.strerror})") from exc
