"""`--data DIR`'s storage test, measured on the host: cold reads (the page cache dropped per file) in
sequential and random order, then warm reads of the same files; each pass's bytes, files and first-read
latency, with the folder's filesystem, size and the RAM the page cache can use (verdicts/storage.py judges
them).

Runs on the host before the in-environment sweep (which reads cold too, so no configuration reads what an
earlier one cached).
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from envguard.errors import BadInputError
from envguard.machine import coldread, disk, host

Order = Literal["sequential", "random"]
MAX_FILES = 2000  # files sampled per pass
MAX_BYTES = 256 * 1024 * 1024  # bytes read per pass at most
MIN_SECONDS, MAX_SECONDS = 0.5, 4.0  # time for all three passes: a share of --budget within these
NOT_COLD_RATIO = 1.5  # cold within this factor of warm: the drop did not take (the files stayed cached)
MIN_FIGURE_FILES = 200  # a cold pass over fewer files (or the folder's own, if smaller) is not a figure
SEED = 0


@dataclass(frozen=True, slots=True)
class Pass:
    """One pass over the sampled files."""

    order: Order
    cold: bool
    files: int
    bytes: int
    seconds: float
    median_first_ms: float  # per file: open to the first 128 KiB (the latency a DataLoader worker waits)

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0

    @property
    def files_per_s(self) -> float:
        return self.files / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True, slots=True)
class IoContention:
    """What else used the disks while the passes ran: bytes read from the block devices by other processes
    (all disks' reads less this process's own) and the share of CPU time the host spent in iowait."""

    seconds: float
    others_read_bytes: int | None
    iowait: float | None

    @property
    def others_mb_per_s(self) -> float | None:
        if self.others_read_bytes is None or self.seconds <= 0:
            return None
        return self.others_read_bytes / 1e6 / self.seconds


def _io_counters() -> tuple[float, int | None, int | None, float | None, float | None]:
    """(now, all disks' read bytes, this process's read bytes, iowait seconds, all CPU seconds)."""
    import psutil

    disks = psutil.disk_io_counters()
    try:
        own: int | None = psutil.Process().io_counters().read_bytes
    except (psutil.Error, AttributeError):
        own = None
    times = psutil.cpu_times()
    iowait = getattr(times, "iowait", None)
    return time.perf_counter(), disks.read_bytes if disks else None, own, iowait, sum(times)


def contention(before: tuple[float, int | None, int | None, float | None, float | None]) -> IoContention:
    """Other processes' disk reads and the host's iowait since `before` (an `_io_counters()` reading)."""
    after = _io_counters()
    seconds = after[0] - before[0]
    others = None
    if None not in (before[1], after[1], before[2], after[2]):
        others = max(0, (after[1] or 0) - (before[1] or 0) - ((after[2] or 0) - (before[2] or 0)))
    iowait = None
    if None not in (before[3], after[3]) and (after[4] or 0) > (before[4] or 0):
        iowait = ((after[3] or 0.0) - (before[3] or 0.0)) / ((after[4] or 0.0) - (before[4] or 0.0))
    return IoContention(round(seconds, 3), others, round(iowait, 4) if iowait is not None else None)


@dataclass(frozen=True, slots=True)
class StorageResult:
    path: str
    fstype: str
    mount_point: str
    network: bool
    in_memory: bool
    files_total: int
    bytes_total: int
    truncated: bool  # more files than the bounded scan counts: the totals are lower bounds
    method: str  # how cold reads were made: fadvise, o_direct, none
    passes: tuple[Pass, ...]
    memory_total: int | None
    memory_available: int | None
    contention: IoContention | None = None

    def pass_for(self, order: Order, cold: bool) -> Pass | None:
        return next((p for p in self.passes if p.order == order and p.cold == cold), None)

    @property
    def dropped(self) -> bool:
        """The cold passes really came from the disk: the drop worked and both were slower than warm."""
        colds = [p for p in self.passes if p.cold]
        warm = self.pass_for("sequential", False)
        if self.method == "none" or self.in_memory or not colds or warm is None:
            return False
        return warm.mb_per_s >= NOT_COLD_RATIO * max(p.mb_per_s for p in colds)

    def cold_latency_ms(self) -> float | None:
        cold = self.pass_for("random", True)
        return cold.median_first_ms if cold else None


def _pass(files: list[Path], order: Order, cold: bool, until: float) -> tuple[Pass, list[Path], set[bool]]:
    """Read `files` in `order`; stop at `until` or MAX_BYTES. Returns the pass, the files read, and the set
    of 'was cold' flags."""
    ordered = list(files)
    if order == "random":
        random.Random(SEED).shuffle(ordered)
    done: list[Path] = []
    firsts: list[float] = []
    flags: set[bool] = set()
    total, seconds = 0, 0.0
    for path in ordered:
        if done and (time.perf_counter() > until or total >= MAX_BYTES):
            break
        read = coldread.read_file(path, cold=cold)
        if read is None:
            continue
        done.append(path)
        firsts.append(read.first_s)
        flags.add(read.cold)
        total += read.bytes
        seconds += read.total_s  # open to last byte: the flush and drop before it are not the disk's time
    seconds = max(seconds, 1e-9)
    median = statistics.median(firsts) * 1000.0 if firsts else 0.0
    return Pass(order, cold, len(done), total, round(seconds, 6), round(median, 4)), done, flags


def measure(folder: Path, budget_s: float) -> StorageResult:
    """The storage test within a share of `budget_s` (MIN_SECONDS..MAX_SECONDS)."""
    files = coldread.data_files(folder, MAX_FILES)
    if not files:
        raise BadInputError(f"--data {folder}: no files under this folder to read; point --data at your data")
    seconds = min(MAX_SECONDS, max(MIN_SECONDS, 0.08 * budget_s))
    started = time.perf_counter()
    counters = _io_counters()
    # the random cold pass first picks the sample (a spread over the folder), the sequential one reads it
    # in path order, then warm: the same files again, now in the page cache
    shuffled, sample, flags = _pass(files, "random", True, started + seconds * 0.45)
    sequential, _, more = _pass(sorted(sample), "sequential", True, started + seconds * 0.9)
    busy = contention(counters)  # the cold passes' window: what else read the disks meanwhile
    warm, _, _ = _pass(sorted(sample), "sequential", False, started + seconds)
    point, fstype, _source = disk.mount_of(folder)
    count, size, truncated = disk.scan(folder)
    memory = host.memory_info()
    info = disk.DiskInfo(str(folder), point, fstype, _source, None, count, size, truncated)
    cold_flags = flags | more
    method = "none" if cold_flags != {True} else "fadvise" if coldread.fadvise_works() else "o_direct"
    return StorageResult(
        path=str(folder),
        fstype=fstype,
        mount_point=point,
        network=info.network,
        in_memory=info.in_memory,
        files_total=count,
        bytes_total=size,
        truncated=truncated,
        method=method,
        passes=(sequential, shuffled, warm),
        memory_total=memory.total,
        memory_available=_available(memory),
        contention=busy,
    )


def _available(memory: host.MemoryInfo) -> int | None:
    """RAM the page cache can grow into: MemAvailable, capped by a cgroup limit (page cache counts there)."""
    values = [v for v in (memory.available, memory.cgroup_limit) if v]
    return min(values) if values else None
