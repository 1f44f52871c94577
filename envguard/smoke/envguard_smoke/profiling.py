"""A sample's cost as a DataLoader worker pays it: read inside one worker process (one intra-op thread, as
torch sets for workers), wall time and that process's CPU time (`time.process_time`, every thread of the
process, which `thread_time` misses), past a warm-up, over enough samples for a median.
"""

from __future__ import annotations

import time
from typing import Any, Dict, Iterator, List, Tuple

from torch.utils.data import DataLoader, Dataset, IterableDataset

from .datasets import is_iterable, sized

WARMUP = 4  # first reads pay imports, file opens, lazy init: not a sample's cost
SAMPLES = 32


def _timed(read: Any) -> Tuple[float, float]:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    read()
    return time.perf_counter() - wall0, time.process_time() - cpu0


class Timed(Dataset):  # type: ignore[type-arg]
    """Returns (wall s, process CPU s) of reading sample `index` instead of the sample (nothing to ship
    back)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, index: int) -> Tuple[float, float]:
        return _timed(lambda: self.inner[index])


class TimedIterable(IterableDataset):  # type: ignore[type-arg]
    def __init__(self, inner: Any, limit: int) -> None:
        self.inner, self.limit = inner, limit

    def __iter__(self) -> Iterator[Tuple[float, float]]:
        source = iter(self.inner)
        for _ in range(self.limit):
            wall0, cpu0 = time.perf_counter(), time.process_time()
            try:
                next(source)
            except StopIteration:
                return
            yield time.perf_counter() - wall0, time.process_time() - cpu0


def profile(dataset: Any, max_seconds: float = 1.5) -> Dict[str, Any]:
    """Median per-sample wall and CPU milliseconds, measured in one DataLoader worker past WARMUP reads."""
    length = sized(dataset)
    count = WARMUP + SAMPLES if length is None else min(length, WARMUP + SAMPLES)
    if is_iterable(dataset):
        loader = DataLoader(TimedIterable(dataset, count), batch_size=None, num_workers=1)
    else:
        loader = DataLoader(Timed(dataset), batch_size=None, sampler=range(count), num_workers=1)
    timings: List[Tuple[float, float]] = []
    started = time.perf_counter()
    for timing in loader:
        timings.append(timing)
        if time.perf_counter() - started > max_seconds and len(timings) >= WARMUP + 3:
            break
    del loader
    kept = timings[WARMUP:] if len(timings) > WARMUP + 2 else timings
    walls, cpus = sorted(w for w, _ in kept), sorted(c for _, c in kept)
    middle = len(walls) // 2
    return {
        "samples": len(kept),
        "warmup": len(timings) - len(kept),
        "where": "one DataLoader worker",
        "wall_ms": round(walls[middle] * 1000, 4) if walls else None,
        "cpu_ms": round(cpus[middle] * 1000, 4) if cpus else None,
    }
