"""Deleting verify's rebuilt environment off the user's clock: renamed into a trash folder in the temp dir and
removed by a detached `rm -rf`, with what an earlier run's deleter left there."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

TRASH = "envguard-verify-trash"
STALE_S = 3600
# $1 the trash folder, then what to delete; the trash folder goes too once empty (rmdir refuses otherwise)
_DELETER = '(trash=$1; shift; rm -rf -- "$@"; rmdir -- "$trash") </dev/null >/dev/null 2>&1 &'


def discard(folder: Path) -> None:
    """Delete FOLDER without waiting: it is renamed into `<temp dir>/envguard-verify-trash/` (one rename on
    the same file system) and a detached `rm -rf` deletes it, with anything an earlier run's deleter left
    there for over an hour (a CI job or batch system that killed it), then the trash folder once empty.
    Where that cannot be done (no `sh`, another file system), the folder is deleted here and now."""
    trash = Path(tempfile.gettempdir()) / TRASH
    sh = shutil.which("sh")
    try:
        if sh is None:
            raise OSError("no sh")
        trash.mkdir(mode=0o700, exist_ok=True)
        target = trash / folder.name
        folder.rename(target)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    doomed = [str(target), *_stale(trash, target)]
    try:  # sh starts rm in the background and exits at once: rm belongs to init, never a zombie of ours
        subprocess.run(
            [sh, "-c", _DELETER, "sh", str(trash), *doomed],
            check=True,
            timeout=30,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        shutil.rmtree(target, ignore_errors=True)


def _stale(trash: Path, keep: Path) -> list[str]:
    now = time.time()
    found = []
    try:
        for entry in os.scandir(trash):
            if entry.path != str(keep) and now - entry.stat(follow_symlinks=False).st_mtime > STALE_S:
                found.append(entry.path)
    except OSError:
        return []
    return found
