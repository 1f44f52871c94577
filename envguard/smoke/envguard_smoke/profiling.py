"""A sample's cost as a DataLoader worker pays it: read inside one worker process (one intra-op thread, as
torch sets for workers), wall time, that process's CPU time (`time.process_time`, every thread of the
process, which `thread_time` misses) and the time the reading thread spent off the CPU (sleep, I/O: its wall
time less its own CPU and run-queue time from /proc/thread-self/schedstat, so a busy machine does not make a
CPU-bound read look like a wait), past a warm-up, over enough samples for a median.

Beside it, the machine: the cores other processes kept busy meanwhile (/proc/stat less this process and its
worker, over at least a second), which a one-thread worker in a session of its own may not feel but the
user's training step does; and torch's intra-op threads in this fresh interpreter (what a training step in
this environment runs unless it sets its own).
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset

from .contention import MIN_TICK_WINDOW_S, machine_busy_s
from .datasets import is_iterable, sized

WARMUP = 4  # first reads pay imports, file opens, lazy init: not a sample's cost
_END = object()
SAMPLES = 32


SCHEDSTAT = "/proc/thread-self/schedstat"


def _sched() -> Optional[Tuple[float, float]]:
    """(CPU seconds, run-queue seconds) of this thread so far, None where /proc does not say."""
    try:
        with open(SCHEDSTAT) as handle:
            fields = handle.read().split()
        return int(fields[0]) / 1e9, int(fields[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _timed(read: Any) -> Tuple[float, float, float]:
    """(wall, process CPU, off-CPU) seconds of one read. Off-CPU is the reading thread's wall time minus its
    own CPU and run-queue time (sleep, I/O): what more workers overlap, which a busy machine does not
    inflate; without schedstat, wall minus CPU."""
    wall0, cpu0, sched0 = time.perf_counter(), time.process_time(), _sched()
    read()
    wall, cpu, sched1 = time.perf_counter() - wall0, time.process_time() - cpu0, _sched()
    if sched0 is None or sched1 is None:
        return wall, cpu, max(0.0, wall - cpu)
    return wall, cpu, max(0.0, wall - (sched1[0] - sched0[0]) - (sched1[1] - sched0[1]))


class Timed(Dataset):  # type: ignore[type-arg]
    """Returns (wall s, process CPU s, off-CPU s) of reading sample `index` instead of the sample (nothing
    to ship back)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, index: int) -> Tuple[float, float, float]:
        return _timed(lambda: self.inner[index])


class TimedIterable(IterableDataset):  # type: ignore[type-arg]
    def __init__(self, inner: Any, limit: int) -> None:
        self.inner, self.limit = inner, limit

    def __iter__(self) -> Iterator[Tuple[float, float, float]]:
        source = iter(self.inner)
        ended: List[bool] = []

        def read() -> None:
            ended.append(next(source, _END) is _END)

        for _ in range(self.limit):
            timing = _timed(read)
            if ended[-1]:
                return
            yield timing


def _own_cpu_s() -> float:
    """CPU seconds of this process and its reaped children (the profile's worker, once joined)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class OtherLoad:
    """The cores other processes kept busy between construction and `cores()`: the machine's busy CPU time
    (/proc/stat) less this process's and its children's, over a window of at least MIN_TICK_WINDOW_S (the
    counters tick every 10 ms); None where /proc/stat does not say."""

    def __init__(self) -> None:
        self.start = (time.perf_counter(), machine_busy_s(), _own_cpu_s())

    def cores(self, deadline: Optional[float] = None) -> Optional[float]:
        wall0, busy0, own0 = self.start
        if busy0 is None:
            return None
        wait = wall0 + MIN_TICK_WINDOW_S - time.perf_counter()
        if deadline is not None:
            wait = min(wait, deadline - time.perf_counter())
        if wait > 0:
            time.sleep(wait)
        wall, busy, own = time.perf_counter(), machine_busy_s(), _own_cpu_s()
        window = wall - wall0
        if busy is None or window < 0.5 * MIN_TICK_WINDOW_S:
            return None
        return round(min(float(os.cpu_count() or 1), max(0.0, (busy - busy0 - (own - own0)) / window)), 3)


def profile(
    dataset: Any, max_seconds: float = 1.5, machine_seconds: float = MIN_TICK_WINDOW_S
) -> Dict[str, Any]:
    """Median per-sample wall and CPU milliseconds, measured in one DataLoader worker past WARMUP reads, the
    cores other processes kept busy meanwhile and torch's intra-op threads here."""
    machine = OtherLoad()
    threads = torch.get_num_threads()
    length = sized(dataset)
    count = WARMUP + SAMPLES if length is None else min(length, WARMUP + SAMPLES)
    # its own generator: the profile must not draw from the global torch RNG the user's loader follows
    own = torch.Generator()
    if is_iterable(dataset):
        loader = DataLoader(TimedIterable(dataset, count), batch_size=None, num_workers=1, generator=own)
    else:
        loader = DataLoader(
            Timed(dataset), batch_size=None, sampler=range(count), num_workers=1, generator=own
        )
    timings: List[Tuple[float, float, float]] = []
    started = time.perf_counter()
    for timing in loader:
        timings.append(timing)
        if time.perf_counter() - started > max_seconds and len(timings) >= WARMUP + 3:
            break
    del loader  # its worker joined: its CPU time is this process's children's
    others = machine.cores(deadline=started + max(max_seconds, machine_seconds))
    kept = timings[WARMUP:] if len(timings) > WARMUP + 2 else timings
    walls, cpus, offs = sorted(t[0] for t in kept), sorted(t[1] for t in kept), sorted(t[2] for t in kept)
    middle = len(walls) // 2
    return {
        "samples": len(kept),
        "warmup": len(timings) - len(kept),
        "where": "one DataLoader worker",
        "wall_ms": round(walls[middle] * 1000, 4) if walls else None,
        "cpu_ms": round(cpus[middle] * 1000, 4) if cpus else None,
        "off_ms": round(offs[middle] * 1000, 4) if offs else None,
        "others_cores": others,
        "cpus": os.cpu_count(),
        "threads": threads,
    }
