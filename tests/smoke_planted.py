"""Datasets with planted DataLoader problems, for `envguard smoke --dataset tests/smoke_planted.py:NAME`.

Module level and plain attributes so they pickle for any worker start method; every class is a real torch
Dataset.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset, get_worker_info

SIZE = 64


class SharedGenerator(Dataset):  # type: ignore[type-arg]
    """The classic bug: one NumPy Generator made in the parent is copied, identical, into every worker."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def __len__(self) -> int:
        return SIZE

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"index": index, "noise": self.rng.random(3)}


class GlobalDraws(Dataset):  # type: ignore[type-arg]
    """The recipe done right: draws from the global generators, which the DataLoader seeds per worker."""

    def __len__(self) -> int:
        return SIZE

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"index": index, "noise": np.random.random(3), "jitter": torch.rand(2)}


class Unseeded(Dataset):  # type: ignore[type-arg]
    """Fresh OS entropy per sample: no two runs agree."""

    def __len__(self) -> int:
        return SIZE

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"index": index, "noise": np.random.default_rng().random(2)}


class WorkerSharded(IterableDataset):  # type: ignore[type-arg]
    """Shards by worker: the interleaved order depends on num_workers."""

    def __iter__(self) -> Any:
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        for index in range(worker, SIZE, workers):
            yield {"index": index}


class Unsharded(IterableDataset):  # type: ignore[type-arg]
    """Forgets to shard: every worker yields the whole stream."""

    def __iter__(self) -> Any:
        for index in range(SIZE):
            yield {"index": index}


class SlowReads(Dataset):  # type: ignore[type-arg]
    """I/O-bound: each sample waits 4 ms and costs almost no CPU."""

    def __len__(self) -> int:
        return 4096

    def __getitem__(self, index: int) -> dict[str, Any]:
        time.sleep(0.004)
        return {"index": index, "x": torch.zeros(16)}


def make_slow_reads() -> SlowReads:
    """A factory function works as well as a class."""
    return SlowReads()
