"""Throughput measurements: one DataLoader configuration at a time, timed batch by batch.

Only raw timings leave this module (batch arrival times, blocking waits, the next epoch's first batch); steady
state, efficiency and the recommendation are computed by envguard from them.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Dict, List, Optional

import torch
from torch.utils.data import DataLoader

from .datasets import batch_bytes, is_iterable, sized

Row = Dict[str, Any]
MIN_ROUNDS, MAX_ROUNDS = 2, 6


def profile(dataset: Any, max_samples: int = 16, max_seconds: float = 0.5) -> Dict[str, Any]:
    """Per-sample wall and CPU time read in the main process (what one worker pays per sample)."""
    walls: List[float] = []
    cpus: List[float] = []
    started = time.perf_counter()
    source = iter(dataset) if is_iterable(dataset) else None
    for index in range(min(max_samples, sized(dataset) or max_samples)):
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        try:
            _item = next(source) if source is not None else dataset[index]
        except StopIteration:
            break
        cpus.append(time.thread_time() - cpu0)
        walls.append(time.perf_counter() - wall0)
        if time.perf_counter() - started > max_seconds and len(walls) >= 2:
            break
    walls.sort()
    cpus.sort()
    middle = len(walls) // 2
    return {
        "samples": len(walls),
        "wall_ms": round(walls[middle] * 1000, 4) if walls else None,
        "cpu_ms": round(cpus[middle] * 1000, 4) if cpus else None,
    }


def _machine_busy_s() -> Optional[float]:
    """CPU seconds all processes have used on this machine (Linux /proc/stat), or None elsewhere."""
    try:
        with open("/proc/stat") as handle:
            fields = handle.readline().split()[1:]
        ticks = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return None
    values = [int(v) for v in fields[:8]]
    busy = sum(values) - values[3] - values[4]  # minus idle and iowait
    return busy / float(ticks)


def _workers_cpu_s(iterator: Any) -> Optional[float]:
    """CPU seconds the iterator's worker processes have used (from /proc/<pid>/stat), or None."""
    total = 0.0
    try:
        ticks = float(os.sysconf("SC_CLK_TCK"))
        for process in getattr(iterator, "_workers", []):
            with open("/proc/%d/stat" % process.pid) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    except (OSError, ValueError, AttributeError, IndexError):
        return None
    return total


class _Contention:
    """How much CPU other processes took while a configuration was timed (shared machines, CI runners)."""

    def __init__(self, iterator: Any) -> None:
        self.iterator = iterator
        self.start = (time.perf_counter(), _machine_busy_s(), time.process_time(), _workers_cpu_s(iterator))

    def others_fraction(self) -> Optional[float]:
        wall0, busy0, main0, workers0 = self.start
        busy, workers = _machine_busy_s(), _workers_cpu_s(self.iterator)
        if busy is None or busy0 is None or workers is None or workers0 is None:
            return None
        ours = (time.process_time() - main0) + (workers - workers0)
        capacity = (time.perf_counter() - wall0) * (os.cpu_count() or 1)
        return round(min(1.0, max(0.0, (busy - busy0 - ours) / capacity)), 4) if capacity > 0 else None


def measure(
    dataset: Any,
    *,
    workers: int,
    pin_memory: bool,
    persistent: bool,
    batch_size: int,
    batches: int,
    collate: Optional[Callable[..., Any]] = None,
    epoch2: bool = True,
    stop_at: Optional[float] = None,
) -> Row:
    """Time one configuration: batch arrivals and waits for `batches` batches, then the next epoch's first.

    Past `stop_at` (a busy machine runs slower than planned) it stops once two rounds after the first are in.
    """
    length = sized(dataset)
    if length is not None:
        batches = min(batches, length // batch_size)
    generator = torch.Generator()
    generator.manual_seed(0)
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=not is_iterable(dataset),
        num_workers=workers,
        drop_last=True,
        pin_memory=pin_memory,
        persistent_workers=persistent and workers > 0,
        generator=generator,
        collate_fn=collate,
    )
    arrivals: List[float] = []
    waits: List[float] = []
    size = 0
    started, cpu0 = time.perf_counter(), time.process_time()
    iterator = iter(loader)
    contention = _Contention(iterator)
    enough = 3 * max(workers, 1)
    for _ in range(batches):
        if stop_at is not None and len(arrivals) >= enough and time.perf_counter() > stop_at:
            break
        asked = time.perf_counter()
        try:
            batch = next(iterator)
        except StopIteration:
            break
        now = time.perf_counter()
        waits.append(now - asked)
        arrivals.append(now - started)
        size = size or batch_bytes(batch)
        del batch
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
    others = contention.others_fraction()
    del iterator, contention
    second = _next_epoch_first_batch(loader) if epoch2 and workers > 0 else None
    closing = time.perf_counter()
    del loader
    return {
        "workers": workers,
        "pin_memory": pin_memory,
        "persistent_workers": persistent and workers > 0,
        "batch_size": batch_size,
        "batches": len(arrivals),
        "batch_bytes": size,
        "arrivals_s": [round(a, 6) for a in arrivals],
        "waits_s": [round(w, 6) for w in waits],
        "epoch2_first_batch_s": second,
        "wall_s": round(wall, 6),
        "main_cpu_s": round(cpu, 6),
        "shutdown_s": round(time.perf_counter() - closing, 6),
        "others_cpu_fraction": others,
    }


def _next_epoch_first_batch(loader: Any) -> float:
    started = time.perf_counter()
    iterator = iter(loader)
    next(iterator)
    seconds = time.perf_counter() - started
    del iterator
    return round(seconds, 6)


def plan_batches(workers: int, per_sample_s: float, batch_size: int, share_s: float, startup_s: float) -> int:
    """Batches for one configuration: whole rounds of `workers` batches that fit its share of the budget.

    Returns 0 when not even MIN_ROUNDS rounds plus start-up (and the next epoch's first batch) fit.
    """
    lanes = max(workers, 1)
    round_s = max(batch_size * per_sample_s, 1e-4)
    # with workers: the next epoch's first batch, then waiting for workers to finish the batch they are on
    overhead = startup_s + (2 * round_s + startup_s if workers > 0 else 0.0)
    rounds = math.floor((share_s - overhead) / round_s) - 1
    if rounds < MIN_ROUNDS:
        return 0
    return lanes * (min(rounds, MAX_ROUNDS) + 1)


def _plain(config: Dict[str, Any], **extra: Any) -> Row:
    row = {k: v for k, v in config.items() if k != "essential"}
    row.update(extra)
    return row


def sweep(
    make: Callable[[int], Any],
    configs: List[Dict[str, Any]],
    *,
    batch_size: int,
    per_sample_s: float,
    deadline: float,
    collate: Optional[Callable[..., Any]] = None,
) -> List[Row]:
    """Measure each configuration inside its share of the time left; configurations that do not fit are
    skipped."""
    rows: List[Row] = []
    startup = 0.1
    for position, config in enumerate(configs):
        share = (deadline - time.perf_counter()) / (len(configs) - position)
        batches = plan_batches(config["workers"], per_sample_s, batch_size, share, startup)
        if batches == 0 and config.get("essential"):
            batches = max(config["workers"], 1) * (MIN_ROUNDS + 1)  # over budget, but never measure nothing
        if batches == 0:
            rows.append(_plain(config, skipped="budget"))
            continue
        row = measure(
            make(batches * batch_size),
            workers=config["workers"],
            pin_memory=config["pin_memory"],
            persistent=config["persistent_workers"],
            batch_size=batch_size,
            batches=batches,
            collate=collate,
            stop_at=time.perf_counter() + share,
        )
        if row["arrivals_s"]:
            startup = max(0.02, row["arrivals_s"][0] - batch_size * per_sample_s)
        rows.append(row)
    return rows
