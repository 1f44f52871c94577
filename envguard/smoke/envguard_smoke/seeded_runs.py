"""Determinism runs: the same seeded DataLoader observed under several worker counts, repeats and epochs.

This half only records what each run delivered (worker, identity and field digests per sample, in order); the
comparisons and verdicts live on the envguard side, where they are pure functions over these records.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional

import torch
from torch.utils.data import DataLoader

from . import heartbeat
from .canonical import digest, stream_digest
from .datasets import (
    Observed,
    ObservedIterable,
    collate_list,
    is_iterable,
    seed_everything,
    sized,
)

Record = Dict[str, Any]


def observe_run(
    factory: Callable[[], Any],
    workers: int,
    *,
    epochs: int,
    seed: int,
    persistent: bool,
    batch_size: int,
    limit: int,
    watch_dir: Optional[str] = None,
) -> List[List[Record]]:
    """Each epoch's first `limit` samples as observations, in delivery order."""
    dataset = factory()
    iterable = is_iterable(dataset)
    inner = heartbeat.wrap(dataset, watch_dir)
    wrapped = ObservedIterable(inner) if iterable else Observed(inner)
    seed_everything(seed)
    generator = torch.Generator()
    generator.manual_seed(seed)
    loader = DataLoader(
        wrapped,
        batch_size=batch_size,
        shuffle=not iterable,
        num_workers=workers,
        collate_fn=collate_list,
        persistent_workers=persistent and workers > 0,
        generator=generator,
    )
    # Small epochs are read to the end: stopping exactly at the end skips RandomSampler's trailing draw (at
    # num_workers=0 only, since workers prefetch past it), which would shift the next epoch's order.
    length = sized(dataset)
    stop = limit if length is None or length > 4 * limit else length + 1
    out: List[List[Record]] = []
    for _epoch in range(epochs):
        delivered: List[Record] = []
        for batch in loader:
            delivered.extend(batch)
            if len(delivered) >= stop:
                break
        out.append(delivered[:limit])
    del loader
    return out


def plan(max_workers: int) -> List[Dict[str, Any]]:
    """The runs to make: name, workers, epochs, persistent."""
    runs = [
        {"name": "w0", "workers": 0, "epochs": 2, "persistent": False},
        {"name": "w0-repeat", "workers": 0, "epochs": 1, "persistent": False},
    ]
    if max_workers >= 1:
        runs += [
            {"name": "wN", "workers": max_workers, "epochs": 2, "persistent": False},
            {"name": "wN-repeat", "workers": max_workers, "epochs": 1, "persistent": False},
            {"name": "wN-persistent", "workers": max_workers, "epochs": 2, "persistent": True},
        ]
    if max_workers >= 2:
        runs.append({"name": "w1", "workers": 1, "epochs": 1, "persistent": False})
    return runs


def run_all(
    factory: Callable[[], Any],
    max_workers: int,
    *,
    seed: int,
    batch_size: int,
    limit: int,
    deadline: float,
    watch_dir: Optional[str] = None,
) -> Dict[str, Any]:
    """All planned runs (skipping those the deadline no longer allows); records plus stream digests."""
    runs: Dict[str, Any] = {}
    skipped: List[str] = []
    for run in plan(max_workers):
        if time.perf_counter() > deadline:
            skipped.append(run["name"])
            continue
        started = time.perf_counter()
        heartbeat.phase(watch_dir, "determinism run %s (num_workers=%d)" % (run["name"], run["workers"]))
        epochs = observe_run(
            factory,
            run["workers"],
            epochs=run["epochs"],
            seed=seed,
            persistent=run["persistent"],
            batch_size=batch_size,
            limit=limit,
            watch_dir=watch_dir,
        )
        runs[run["name"]] = {
            "workers": run["workers"],
            "persistent": run["persistent"],
            "epochs": epochs,
            "order_digests": [stream_digest([r["id"] for r in e]) for e in epochs],
            "stream_digests": [stream_digest([digest(r) for r in e]) for e in epochs],
            "seconds": round(time.perf_counter() - started, 4),
        }
    return {"seed": seed, "batch_size": batch_size, "limit": limit, "runs": runs, "skipped": skipped}
