"""Atomic file writes: a temp file in the same folder, fsync, rename, fsync of the folder. A crash never
leaves half a file, and a written file survives a power cut.

`write_output` is how `-o FILE` writes: atomically onto a regular file or a new path (through a symlink, to
its target), but straight through onto a FIFO, a device or `/dev/stdout`, which a rename would replace."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

from envguard.channels import scrub
from envguard.errors import BadInputError, OperationalError
from envguard.process import alive

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def child(folder: Path, name: str) -> Path:
    """`folder / name` where `name` must be one plain path component (never empty, `.`, `..`, a separator or
    NUL): a path built from what an input names stays inside its folder. Bad input otherwise."""
    if name in ("", ".", "..") or any(c in name for c in ("/", "\\", "\0", os.sep)):
        raise BadInputError(f"{name!r} cannot be a file name inside {folder}; refusing to write outside it")
    return folder / name


def write_text(
    path: str | os.PathLike[str], text: str, *, durable: bool = True, private: bool = False
) -> Path:
    """Write `text` (UTF-8, LF) to `path` atomically, credentials scrubbed from every URL in it, and return
    the path."""
    return write_bytes(path, scrub(text).encode("utf-8"), durable=durable, private=private)


def write_bytes(
    path: str | os.PathLike[str], data: bytes, *, durable: bool = True, private: bool = False
) -> Path:
    """Write `data` to `path` atomically, keeping an existing file's permissions.

    `durable=False` skips the fsync: still atomic (readers see the old or the new file, never half of one),
    for caches whose loss after a power cut only costs time. `private`: envguard's own caches, mode 0600 in
    folders created 0700 (they can hold what a lock or an environment reveals)."""
    target = Path(path)
    folder = target.parent
    tmp = folder / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        _make_folder(folder, 0o700 if private else 0o777)
        fd = os.open(tmp, _FLAGS, 0o600 if private else 0o666)  # the umask applies, as for any new file
    except OSError as exc:
        raise OperationalError(
            f"cannot write {target}: {exc.strerror or exc}; check the folder exists and is writable"
        ) from exc
    try:
        if not private:
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


def _make_folder(folder: Path, mode: int) -> None:
    missing = []
    probe = folder
    while not probe.is_dir() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    for item in reversed(missing):
        with contextlib.suppress(FileExistsError):
            item.mkdir(mode=mode)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable: fsync the folder's entry table (POSIX; Windows cannot open folders)."""
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_STREAMS = re.compile(r"^/(?:dev/(?:stdout|stderr|fd/\d+)|proc/self/fd/\d+)$")
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp$")


def write_output(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `-o` output: through (no rename) when `path` is a FIFO, a device, a socket or a stream such as
    /dev/stdout; otherwise atomically to the real file a symlink names (the link stays), removing temp files
    an earlier killed envguard left beside it."""
    target = Path(path)
    stream = _STREAMS.match(str(target))
    if stream:
        return _write_fd(target, data)
    if _is_special(target):
        return _write_through(target, data)
    real = Path(os.path.realpath(target)) if os.path.islink(target) else target  # os.path: never raises
    clean_stale_temps(real)
    return write_bytes(real, data)


def _is_special(path: Path) -> bool:
    try:
        mode = os.stat(path).st_mode  # follows symlinks: a link to a FIFO is a FIFO
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_fd(target: Path, data: bytes) -> Path:
    """/dev/stdout, /dev/stderr, /dev/fd/N: write to the descriptor itself (opening the name would truncate a
    file the shell appends to)."""
    import sys

    name = str(target)
    fd = 1 if name.endswith("stdout") else 2 if name.endswith("stderr") else int(name.rsplit("/", 1)[1])
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OperationalError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return target


def _write_through(target: Path, data: bytes) -> Path:
    try:
        with open(target, "wb", buffering=0) as handle:
            view = memoryview(data)
            while view:
                view = view[handle.write(view) or 0 :]
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OperationalError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return target


def clean_stale_temps(target: Path) -> None:
    """Remove `.NAME.PID.RAND.tmp` files of ours beside `target` whose process is gone (a kill -9 during a
    write); another process's live temp file is left alone."""
    try:
        names = os.listdir(target.parent)
    except OSError:
        return
    for name in names:
        match = _TEMP.match(name)
        if match is None or match.group("name") != target.name or alive(int(match.group("pid"))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(target.parent / name)
