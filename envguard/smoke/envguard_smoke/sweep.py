"""`--sweep num_workers,...`: time the user's own DataLoader as given (its sampler, batch_sampler, collate_fn,
worker_init_fn, prefetch_factor, persistent_workers...), changing only the keyword arguments the user allows.

The configurations are measured interleaved (envguard_smoke.interleave): in each round every configuration
runs one short pass (iter(): its workers start, or resume, being persistent; then 0.2 s of steady rounds), in
a rotated order, and rounds repeat until the answer cannot change or the time ends. Load that comes and goes
then moves every configuration alike, and envguard compares them pass by pass within a round. Only raw
timings leave this module, in the rows' format of the synthetic sweep (batch arrival times, blocking waits)
with each pass's own, so envguard computes the steady-state rates with the same estimator (round 0 left out)
and the bounded efficiency against the per-sample cost profiled in one worker.
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Dict, List

from . import interleave

SWEEPABLE = ("num_workers", "prefetch_factor")
PREFETCH = (2, 4)  # prefetch_factor values tried besides the loader's own
NAME = "your loader"


def rebuild(loader: Any, changes: Dict[str, Any]) -> Any:
    """A DataLoader over the same dataset with the user's settings, except `changes`."""
    from torch.utils.data import BatchSampler, DataLoader, IterableDataset

    given: Dict[str, Any] = {
        "num_workers": loader.num_workers,
        "collate_fn": loader.collate_fn,
        "pin_memory": loader.pin_memory,
        "timeout": loader.timeout,
        "worker_init_fn": loader.worker_init_fn,
        "multiprocessing_context": loader.multiprocessing_context,
        "generator": loader.generator,
        "prefetch_factor": loader.prefetch_factor,
        "persistent_workers": loader.persistent_workers,
        "in_order": getattr(loader, "in_order", True),
    }
    default = type(loader.batch_sampler) is BatchSampler and loader.batch_sampler.sampler is loader.sampler
    if isinstance(loader.dataset, IterableDataset):
        given.update(batch_size=loader.batch_size, drop_last=loader.drop_last)
    elif default:  # DataLoader built the batch sampler from the user's sampler: keep that sampler
        given.update(sampler=loader.sampler, batch_size=loader.batch_size, drop_last=loader.drop_last)
    elif loader.batch_sampler is not None:  # a custom batch sampler: the user's batching travels inside it
        given["batch_sampler"] = loader.batch_sampler
    else:
        given.update(sampler=loader.sampler, batch_size=None)
    given.update(changes)
    if not given["num_workers"]:  # DataLoader refuses these without workers
        given.update(prefetch_factor=None, persistent_workers=False)
    elif given["prefetch_factor"] is None:
        given["prefetch_factor"] = 2
    accepted = inspect.signature(DataLoader.__init__).parameters
    return DataLoader(loader.dataset, **{k: v for k, v in given.items() if k in accepted})


def configurations(loader: Any, allowed: List[str], workers: List[int]) -> List[Dict[str, Any]]:
    """The loader's own configuration first, then every combination of the allowed values."""
    counts = sorted(set(workers) | {loader.num_workers}) if "num_workers" in allowed else [loader.num_workers]
    prefetch = [loader.prefetch_factor]
    if "prefetch_factor" in allowed:
        prefetch = sorted({p for p in (*PREFETCH, loader.prefetch_factor) if p is not None})
    out: List[Dict[str, Any]] = [{}]
    for count in counts:
        for factor in prefetch:
            change = {"num_workers": count, "prefetch_factor": factor if count else None}
            own = count == loader.num_workers and (not count or factor == (loader.prefetch_factor or 2))
            if not own and change not in out:
                out.append(change)
    return out


def batch_size_of(loader: Any) -> int:
    """Samples per batch: the loader's batch_size, else the length of its batch sampler's first batch."""
    if loader.batch_size:
        return int(loader.batch_size)
    if loader.batch_sampler is None:
        return 1
    first = next(iter(loader.batch_sampler), None)
    return len(first) if first is not None else 1


def time_one(loader: Any, batches: int, stop_at: float) -> Dict[str, Any]:
    """Batch arrivals and waits of one pass of a configuration (the synthetic sweep's row format): up to
    `batches`, ending once the pass has enough steady rounds (interleave.enough)."""
    from .timing import timed_batches

    lanes = max(int(loader.num_workers), 1)
    started, cpu0 = time.perf_counter(), time.process_time()
    iterator = iter(loader)
    arrivals, waits, size = timed_batches(iterator, batches, started, stop_at, 0.0, interleave.enough(lanes))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
    del iterator
    return {
        "workers": int(loader.num_workers),
        "pin_memory": bool(loader.pin_memory),
        "persistent_workers": False,  # one epoch each: its start-up is what is timed
        "prefetch_factor": loader.prefetch_factor,
        "batches": len(arrivals),
        "batch_bytes": size,
        "arrivals_s": [round(a, 6) for a in arrivals],
        "waits_s": [round(w, 6) for w in waits],
        "epoch2_first_batch_s": None,
        "wall_s": round(wall, 6),
        "main_cpu_s": round(cpu, 6),
        "step_s": 0.0,
    }


def run(settings: Dict[str, Any], deadline: float) -> List[Dict[str, Any]]:
    """Raw throughput entries for the user's loader: one per prefetch_factor swept (one when it is not)."""
    from . import profiling
    from .datasets import is_iterable, sized
    from .user_loader import factory, watch_phase

    loader = factory(settings["loader"])()
    allowed = list(settings.get("sweep") or ())
    entry: Dict[str, Any] = {"name": NAME, "nominal_latency_ms": None, "nominal_cpu_ms": None}
    entry["length"], entry["iterable"] = sized(loader.dataset), is_iterable(loader.dataset)
    watch_phase("profiling your dataset for the sweep")
    entry["profile"] = profiling.profile(loader.dataset, max_seconds=min(1.5, 0.2 * _left(deadline)))
    size = batch_size_of(loader)
    plan = configurations(loader, allowed, list(settings.get("workers") or []))
    # persistent workers in every configuration: a pass after the first resumes them instead of starting
    # new ones (start-up is round 0, left out of the rate; it cost as much as the pass under load). Every
    # configuration's workers are alive at once: under twice the most workers swept for 0, 1, 2, 4, ...
    built: List[Any] = [rebuild(loader, dict(change, persistent_workers=True)) for change in plan]
    rows = [_row(built[i], size, given=not plan[i]) for i in range(len(plan))]
    length = entry["length"]
    began = time.perf_counter()
    for number in range(interleave.MAX_PASSES):
        done = interleave.retired(rows, size) if number >= interleave.RETIRE_AFTER else []
        for index in done:  # decided: its persistent workers are shut down, their memory given back
            built[index] = None
        for index in interleave.order(len(plan), number):
            if index in done:
                continue
            row, one = rows[index], built[index]
            lanes = max(int(one.num_workers), 1)
            batches = interleave.most_batches(lanes)
            if length is not None:
                batches = min(batches, max(1, length // size))
            if number and interleave.pass_cost(row["passes"]) > _left(deadline):
                return _finish(entry, rows, "prefetch_factor" in allowed)
            watch_phase(
                "sweep round %d: num_workers=%s, prefetch_factor=%s"
                % (number + 1, one.num_workers, one.prefetch_factor)
            )
            at = time.perf_counter() - began
            timed = time_one(one, batches, deadline)
            timed.update(round=number, at_s=round(at, 6))
            row["passes"].append(timed)
        if number + 1 >= interleave.MIN_PASSES and interleave.settled(rows, size):
            break
    return _finish(entry, rows, "prefetch_factor" in allowed)


def _row(loader: Any, size: int, given: bool) -> Dict[str, Any]:
    return {
        "workers": int(loader.num_workers),
        "pin_memory": bool(loader.pin_memory),
        "persistent_workers": False,  # the rate does not depend on it: each pass's round 0 is left out
        "prefetch_factor": loader.prefetch_factor,
        "batch_size": size,
        "given": given,
        "passes": [],
    }


def _finish(entry: Dict[str, Any], rows: List[Dict[str, Any]], by_prefetch: bool) -> List[Dict[str, Any]]:
    """The rows in the synthetic sweep's format: the first pass's arrivals and waits (its start-up), totals
    over the passes, and every pass's own arrivals for the rates; a configuration no round reached is
    skipped for the budget."""
    out: List[Dict[str, Any]] = []
    for row in rows:
        passes = row.pop("passes")
        if not passes or not passes[0]["arrivals_s"]:
            out.append(dict(row, skipped="budget"))
            continue
        first = passes[0]
        row.update(
            batches=sum(p["batches"] for p in passes),
            batch_bytes=first["batch_bytes"],
            arrivals_s=first["arrivals_s"],
            waits_s=first["waits_s"],
            epoch2_first_batch_s=None,
            wall_s=round(sum(p["wall_s"] for p in passes), 6),
            main_cpu_s=round(sum(p["main_cpu_s"] for p in passes), 6),
            step_s=0.0,
            passes=[interleave.kept(p) for p in passes],
        )
        out.append(row)
    return _split(entry, out, by_prefetch)


def _split(entry: Dict[str, Any], rows: List[Dict[str, Any]], by_prefetch: bool) -> List[Dict[str, Any]]:
    """One entry per prefetch_factor when it was swept (num_workers=0 rows belong to each), else one."""
    rows = sorted(rows, key=lambda r: (r["workers"], r["prefetch_factor"] or 0))
    if not by_prefetch:
        return [dict(entry, rows=rows)]
    factors = sorted({r["prefetch_factor"] for r in rows if r["prefetch_factor"] is not None})
    out: List[Dict[str, Any]] = []
    for factor in factors:
        mine = [r for r in rows if r["prefetch_factor"] in (None, factor)]
        out.append(dict(entry, name="%s, prefetch_factor=%d" % (NAME, factor), rows=mine))
    return out or [dict(entry, rows=rows)]


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.perf_counter())
