"""Throughput measurements: one DataLoader configuration at a time, timed batch by batch.

Only raw timings leave this module (batch arrival times, blocking waits, the next epoch's first batch); steady
state, efficiency and the recommendation are computed by envguard from them.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from torch.utils.data import DataLoader

from . import contention, heartbeat, interleave, planner
from .datasets import batch_bytes, is_iterable, sized

Row = Dict[str, Any]


def measure(dataset: Any, **options: Any) -> Row:
    """`_measure` with num_workers=0 held to one intra-op thread, the count each worker runs with: the main
    process's own torch threads otherwise fight the loop for the CPUs (0.23 vs 0.99 of ideal measured here).
    """
    threads = torch.get_num_threads()
    if options["workers"] == 0:
        torch.set_num_threads(1)
    try:
        row = _measure(dataset, **options)
    finally:
        torch.set_num_threads(threads)
    row["main_threads"] = 1 if options["workers"] == 0 else threads
    return row


def _measure(
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
    watch_dir: Optional[str] = None,
    step_s: float = 0.0,
    epoch2_by: Optional[float] = None,
    enough: Optional[Callable[[List[float]], bool]] = None,
) -> Row:
    """Time one configuration: arrivals and waits of `batches` batches (fewer once `enough`), then the next
    epoch's first (if, as slow as this one's first, it arrives by `epoch2_by`). After each batch the loop
    sleeps `step_s` (a training step), so a wait means "the loop waited for data". Past `stop_at` it stops."""
    length = sized(dataset)
    if length is not None:
        batches = min(batches, length // batch_size)
    loader = _loader(heartbeat.wrap(dataset, watch_dir), workers, pin_memory, persistent, batch_size, collate)
    started, cpu0 = time.perf_counter(), time.process_time()
    iterator = iter(loader)
    busy = contention.Contention(iterator, contention.own_cpu_stat())
    arrivals, waits, size = timed_batches(iterator, batches, started, stop_at, step_s, enough)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
    evidence = busy.result()
    del iterator, busy
    late = epoch2_by is not None and time.perf_counter() + (arrivals[:1] or [0.0])[0] > epoch2_by
    second = first_batch(loader) if epoch2 and workers > 0 and not late else None
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
        "step_s": step_s,
        "shutdown_s": round(time.perf_counter() - closing, 6),
        **evidence,
    }


def _loader(
    dataset: Any,
    workers: int,
    pin_memory: bool,
    persistent: bool,
    batch_size: int,
    collate: Optional[Callable[..., Any]],
) -> Any:
    """The DataLoader under test: a fixed shuffle seed, whole batches only."""
    generator = torch.Generator()
    generator.manual_seed(0)
    return DataLoader(
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


def timed_batches(
    iterator: Any,
    batches: int,
    started: float,
    stop_at: Optional[float],
    step_s: float,
    enough: Optional[Callable[[List[float]], bool]] = None,
) -> Tuple[List[float], List[float], int]:
    """(arrival times after `started`, blocking waits, one batch's bytes) of up to `batches` batches, a
    simulated training step after each; stops early past `stop_at`, or once `enough(arrivals)` says so."""
    arrivals: List[float] = []
    waits: List[float] = []
    size = 0
    for _ in range(batches):
        if stop_at is not None and time.perf_counter() > stop_at:
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
        if step_s > 0:
            time.sleep(step_s)
        if enough is not None and enough(arrivals):
            break
    return arrivals, waits, size


def first_batch(loader: Any) -> float:
    """Seconds from iter() to the first batch, then the workers are shut down."""
    started = time.perf_counter()
    iterator = iter(loader)
    next(iterator)
    seconds = time.perf_counter() - started
    del iterator
    return round(seconds, 6)


def _skipped(workers: int, persistent: bool, why: str) -> Row:
    return {"workers": workers, "pin_memory": False, "persistent_workers": persistent, "skipped": why}


class Sweep:
    """One dataset's sweep: the planner's configurations, measured while they fit before the deadline, then
    the counts around the knee, then persistent workers at the most workers measured (their epoch-2 start-up).
    """

    def __init__(
        self,
        make: Callable[[int], Any],
        *,
        batch_size: int,
        per_sample_s: float,
        cpu_bound: bool,
        cpus: int,
        deadline: float,
        collate: Optional[Callable[..., Any]] = None,
        watch_dir: Optional[str] = None,
        step_ms: Optional[float] = None,
        on_row: Optional[Callable[[], None]] = None,
    ) -> None:
        self.make, self.batch_size, self.per_sample_s = make, batch_size, per_sample_s
        self.cpu_bound, self.cpus, self.deadline = cpu_bound, cpus, deadline
        self.collate, self.watch_dir, self.step_ms = collate, watch_dir, step_ms
        self.on_row = on_row  # after each row (main writes the partial results: a kill keeps them)
        self.startup = 0.1
        self.began = time.perf_counter()
        self.rows: List[Row] = []
        self.rates: Dict[int, float] = {}

    def round_s(self, workers: int) -> float:
        return planner.round_seconds(
            workers,
            self.per_sample_s,
            self.batch_size,
            self.cpu_bound,
            self.cpus,
            self.step_ms / 1000.0 if self.step_ms is not None else None,
        )

    def step_s(self, workers: int) -> float:
        """The simulated training step: --step-ms, else half the ideal time between two batches at this N."""
        if self.step_ms is not None:
            return self.step_ms / 1000.0
        return planner.STEP_FRACTION * self.batch_size * self.per_sample_s / max(workers, 1)

    def _plan(self, counts: List[int], essential: List[int], budget_s: float) -> List[Dict[str, Any]]:
        return planner.plan(
            counts,
            essential,
            per_sample_s=self.per_sample_s,
            batch_size=self.batch_size,
            budget_s=budget_s,
            startup_s=self.startup,
            cpu_bound=self.cpu_bound,
            cpus=self.cpus,
            step_s=self.step_ms / 1000.0 if self.step_ms is not None else None,
        )

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def run(self, counts: List[int], essential: List[int], refine: bool = True) -> List[Row]:
        """The planned counts (round 0 of the interleaved measurement, each with its planned rounds), the
        counts around the knee, persistent workers at the most workers; then more rounds of short passes
        of every measured count, interleaved, with the time left (`more_rounds`)."""
        self.began = time.perf_counter()
        most = max(counts)
        for entry in self._plan(counts, essential, self.left()):
            self._one(entry, epoch2=entry["workers"] == most)
        for workers in planner.refine(self.rates) if refine else []:
            extra = self._plan([workers], [], self.left())
            if extra:
                self._one(extra[0], epoch2=False)
        measured = {r["workers"] for r in self.rows if not r.get("skipped")}
        self.rows += [
            _skipped(n, False, "budget")
            for n in counts
            if n not in measured and not any(r["workers"] == n for r in self.rows)
        ]
        self._persistent(max([n for n in measured if n > 0], default=0))
        self.more_rounds()
        return sorted(self.rows, key=lambda r: (r["workers"], r["persistent_workers"]))

    def more_rounds(self) -> None:
        """Rounds 1.. of the interleaved measurement: a short pass of every measured count per round, in a
        rotated order, leaving out the counts decided already, until the answer cannot change
        (interleave.settled) or the time is up."""
        rows = [r for r in self.rows if r.get("passes") and not r["persistent_workers"]]
        if len(rows) < 2:
            return
        for number in range(1, interleave.MAX_PASSES):
            if number >= interleave.MIN_PASSES and interleave.settled(rows, self.batch_size):
                return
            done = interleave.retired(rows, self.batch_size) if number >= interleave.RETIRE_AFTER else []
            for index in interleave.order(len(rows), number):
                if index in done:
                    continue
                if interleave.pass_cost(rows[index]["passes"]) > self.left():
                    return
                self._pass(rows[index], number)

    def _pass(self, row: Row, number: int) -> None:
        """One more pass of a measured count, added to its row."""
        workers = row["workers"]
        lanes = max(workers, 1)
        heartbeat.phase(self.watch_dir, "throughput round %d: num_workers=%d" % (number + 1, workers))
        batches = interleave.most_batches(lanes)
        at = time.perf_counter() - self.began
        timed = measure(
            self.make(batches * self.batch_size),
            workers=workers,
            pin_memory=False,
            persistent=False,
            batch_size=self.batch_size,
            batches=batches,
            collate=self.collate,
            epoch2=False,
            stop_at=self.deadline,
            watch_dir=self.watch_dir,
            step_s=self.step_s(workers),
            enough=interleave.enough(lanes),
        )
        row["passes"].append(interleave.kept(dict(timed, round=number, at_s=round(at, 6))))
        row["batches"] += timed["batches"]
        row["wall_s"] = round(row["wall_s"] + timed["wall_s"], 6)
        row["main_cpu_s"] = round(row["main_cpu_s"] + timed["main_cpu_s"], 6)
        if self.on_row is not None:
            self.on_row()

    def _one(self, entry: Dict[str, Any], *, epoch2: bool, persistent: bool = False) -> None:
        workers = entry["workers"]
        round_s = self.round_s(workers)
        cost = planner.cost_seconds(workers, entry["steady_rounds"], round_s, self.startup, epoch2)
        if epoch2 and not persistent and cost > self.left():  # keep the rate, drop the epoch-2 batch
            epoch2, cost = False, planner.cost_seconds(workers, entry["steady_rounds"], round_s, self.startup)
        if cost > self.left():  # fewer rounds, down to the floor, rather than nothing (the row says so)
            fits = math.floor((self.left() - self.startup - planner.SHUTDOWN_S) / round_s) - 1
            if fits < planner.FLOOR_STEADY or epoch2:
                self.rows.append(_skipped(workers, persistent, "budget"))
                return
            entry = dict(entry, steady_rounds=fits, batches=max(workers, 1) * (1 + fits))
        heartbeat.phase(
            self.watch_dir, "throughput: num_workers=%d, persistent_workers=%s" % (workers, persistent)
        )
        started = time.perf_counter()
        row = measure(
            self.make(entry["batches"] * self.batch_size),
            workers=workers,
            pin_memory=False,
            persistent=persistent,
            batch_size=self.batch_size,
            batches=entry["batches"],
            collate=self.collate,
            epoch2=epoch2,
            # never past the deadline, nor twice the planned cost: one slow row cannot eat the others' time
            stop_at=min(
                self.deadline - (round_s + self.startup if epoch2 else 0.0), time.perf_counter() + 2 * cost
            ),
            watch_dir=self.watch_dir,
            step_s=self.step_s(workers),
            epoch2_by=self.deadline,
        )
        row["planned_steady_rounds"] = entry["steady_rounds"]
        if not persistent and row["arrivals_s"]:  # round 0 of the interleaved measurement
            row["passes"] = [interleave.kept(dict(row, round=0, at_s=round(started - self.began, 6)))]
        self.rows.append(row)
        if self.on_row is not None:
            self.on_row()
        if row["arrivals_s"]:
            self.startup = min(2.0, max(0.02, row["arrivals_s"][0] - round_s))
        rate = planner.quick_rate(row["arrivals_s"], max(workers, 1), self.batch_size)
        if rate and not persistent:
            self.rates[workers] = rate

    def _persistent(self, workers: int) -> None:
        """persistent_workers=True at `workers`, where they could be worth it: only its epoch-2 first batch is
        news (the rate is the plain one)."""
        plain = [
            r for r in self.rows if r["workers"] == workers and r.get("epoch2_first_batch_s") is not None
        ]
        if workers <= 0 or not plain:
            return
        # persistent workers save at most the start-up a new epoch pays beyond producing its first batch:
        # below what would make them recommended, measuring them cannot change the answer
        if plain[0]["epoch2_first_batch_s"] - self.round_s(workers) < planner.PERSISTENT_SAVES_S:
            return
        steady = planner.FLOOR_STEADY
        self._one(
            {"workers": workers, "steady_rounds": steady, "batches": workers * (1 + steady)},
            epoch2=True,
            persistent=True,
        )
