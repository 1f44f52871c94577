"""Atomic file writes: a temp file in the same folder, fsync, rename. A crash never leaves half a file."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from envguard.errors import OperationalError


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` (UTF-8, LF) to `path` atomically and return the path."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` atomically, keeping an existing file's permissions."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OperationalError(
            f"cannot write {target}: {exc.strerror or exc}; check the folder exists and is writable"
        ) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        if not target.exists():
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OperationalError(f"cannot write {target}: {exc.strerror or exc}; nothing was changed") from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
