"""Cold reads of a data folder's files: the page cache dropped per file (posix_fadvise DONTNEED) before each
read, or O_DIRECT where fadvise is missing; doctor's read latency and smoke's storage test both use these.

The `rotational` flag is unreliable on VMs (virtio disks often say 1); what a DataLoader feels is how long one
read takes, so that decides HDD-like or SSD-like.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

READ_BYTES = 128 * 1024
CHUNK = 1024 * 1024
MAX_FILES = 16
HDD_MS = 4.0  # a random read slower than this behaves like a spinning disk (seek + rotation ~ 5-10 ms)


@dataclass(frozen=True, slots=True)
class Latency:
    samples: int
    median_ms: float
    cold: bool  # the page cache was dropped for each file before its read (posix_fadvise DONTNEED)


@dataclass(frozen=True, slots=True)
class FileRead:
    """One whole-file read: bytes, seconds from open() to the first 128 KiB and to the end, and whether it
    was cold."""

    bytes: int
    first_s: float
    total_s: float
    cold: bool


def data_files(folder: Path, limit: int) -> list[Path]:
    """Up to `limit` regular files under `folder`, sorted by path (symlinks left out)."""
    found: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root, name)
            if path.is_file() and not path.is_symlink():
                found.append(path)
                if len(found) >= limit:
                    return found
    return found


def drop(fd: int) -> bool:
    """Ask the kernel to forget the file's cached pages; False where it cannot (no posix_fadvise)."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return False
    # DONTNEED skips dirty pages: a file written moments ago (an unpacked archive) would read warm. Its
    # writeback is due anyway; flush it now so the read that follows comes from the disk.
    with contextlib.suppress(OSError):
        os.fdatasync(fd)
    try:
        advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError:
        return False
    return True


def _prepare(path: Path) -> tuple[bool, bool] | None:
    """(cold, direct) for the read that follows: the cached pages dropped (flushed first), or O_DIRECT
    where posix_fadvise is missing; None when the file cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        if drop(fd):
            return True, False
    finally:
        os.close(fd)
    return (True, True) if getattr(os, "O_DIRECT", 0) else (False, False)


def read_file(path: Path, *, cold: bool, limit: int | None = None) -> FileRead | None:
    """Read `path` whole (or its first `limit` bytes) in 1 MiB chunks; None when it cannot be opened.

    The clock starts at open() (a cold file's inode lookup is part of what a worker waits for) and leaves out
    the flush and drop that made the file cold."""
    prepared = _prepare(path) if cold else (False, False)
    if prepared is None:
        return None
    was_cold, direct = prepared
    started = time.perf_counter()
    try:
        fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECT", 0) if direct else 0))
    except OSError:
        return None if not direct else read_file(path, cold=False, limit=limit)
    size = min(CHUNK, limit) if limit else CHUNK
    buffer = mmap.mmap(-1, CHUNK) if direct else None  # page-aligned, as O_DIRECT needs
    total, first, refused = 0, 0.0, False
    try:
        while limit is None or total < limit:
            step = size if total else min(size, READ_BYTES)  # the first read alone: the latency a worker sees
            try:
                got = os.readv(fd, [memoryview(buffer)[:step]]) if buffer else len(os.read(fd, step))
            except OSError:
                refused = direct and total == 0  # O_DIRECT refused by this filesystem
                break
            if total == 0:
                first = time.perf_counter() - started
            if got <= 0:
                break
            total += got
    finally:
        if buffer is not None:
            buffer.close()
        os.close(fd)
    if refused:
        return read_file(path, cold=False, limit=limit)
    return FileRead(bytes=total, first_s=first, total_s=time.perf_counter() - started, cold=was_cold)


def _read_ms(path: Path) -> tuple[float, bool] | None:
    read = read_file(path, cold=True, limit=READ_BYTES)
    return None if read is None else (read.total_s * 1000.0, read.cold)


def measure(folder: Path, limit: int = MAX_FILES) -> Latency:
    """Median milliseconds to read the first 128 KiB of up to `limit` files of `folder`."""
    reads = [r for r in (_read_ms(p) for p in data_files(folder, limit)) if r is not None]
    if not reads:
        return Latency(samples=0, median_ms=0.0, cold=False)
    return Latency(
        samples=len(reads),
        median_ms=round(statistics.median(ms for ms, _ in reads), 3),
        cold=all(c for _, c in reads),
    )


def fadvise_works() -> bool:
    """Whether this platform has posix_fadvise (Linux, most BSDs; not macOS)."""
    return getattr(os, "posix_fadvise", None) is not None
