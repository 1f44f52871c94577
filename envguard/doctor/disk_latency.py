"""Read latency of the data folder's files, measured (cold where the kernel lets us drop the cached pages).

The `rotational` flag is unreliable on VMs (virtio disks often say 1); what a DataLoader feels is how long one
read takes, so that decides HDD-like or SSD-like.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

READ_BYTES = 128 * 1024
MAX_FILES = 16
HDD_MS = 4.0  # a random read slower than this behaves like a spinning disk (seek + rotation ~ 5-10 ms)


@dataclass(frozen=True, slots=True)
class Latency:
    samples: int
    median_ms: float
    cold: bool  # the page cache was dropped for each file before its read (posix_fadvise DONTNEED)


def _files(folder: Path, limit: int) -> list[Path]:
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


def _read_ms(path: Path) -> tuple[float, bool] | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        cold = False
        advise = getattr(os, "posix_fadvise", None)
        if advise is not None:
            try:
                advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                cold = True
            except OSError:
                pass
        started = time.perf_counter()
        os.read(fd, READ_BYTES)
        return (time.perf_counter() - started) * 1000.0, cold
    finally:
        os.close(fd)


def measure(folder: Path, limit: int = MAX_FILES) -> Latency:
    """Median milliseconds to read the first 128 KiB of up to `limit` files of `folder`."""
    reads = [r for r in (_read_ms(p) for p in _files(folder, limit)) if r is not None]
    if not reads:
        return Latency(samples=0, median_ms=0.0, cold=False)
    return Latency(
        samples=len(reads),
        median_ms=round(statistics.median(ms for ms, _ in reads), 3),
        cold=all(c for _, c in reads),
    )
