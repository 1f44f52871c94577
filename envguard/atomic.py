"""Atomic file writes: a temp file in the same folder, fsync, rename, fsync of the folder. A crash never
leaves half a file, and a written file survives a power cut."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from envguard.errors import OperationalError

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def write_text(path: str | os.PathLike[str], text: str, *, durable: bool = True) -> Path:
    """Write `text` (UTF-8, LF) to `path` atomically and return the path."""
    return write_bytes(path, text.encode("utf-8"), durable=durable)


def write_bytes(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> Path:
    """Write `data` to `path` atomically, keeping an existing file's permissions.

    `durable=False` skips the fsync: still atomic (readers see the old or the new file, never half of one),
    for caches whose loss after a power cut only costs time."""
    target = Path(path)
    folder = target.parent
    tmp = folder / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, _FLAGS, 0o666)  # the umask applies, as for any new file
    except OSError as exc:
        raise OperationalError(
            f"cannot write {target}: {exc.strerror or exc}; check the folder exists and is writable"
        ) from exc
    try:
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, target)
        if durable:
            _fsync_folder(folder)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OperationalError(f"cannot write {target}: {exc.strerror or exc}; nothing was changed") from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable: fsync the folder's entry table (POSIX; Windows cannot open folders)."""
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
