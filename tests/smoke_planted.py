"""Datasets with planted DataLoader problems, for `envguard smoke --dataset tests/smoke_planted.py:NAME`.

Module level and plain attributes so they pickle for any worker start method; every class is a real torch
Dataset.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, NamedTuple

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


def _decoded(index: int, size: int = 16) -> torch.Tensor:
    """What decoding image file `index` gives: a fixed float32 image per index."""
    g = torch.Generator().manual_seed(index)
    return torch.rand(3, size, size, generator=g)


def _augment(image: torch.Tensor) -> torch.Tensor:
    """torchvision-style per-sample augmentation drawn from torch's global RNG (seeded per worker by PyTorch):
    random crop offset, horizontal flip, brightness jitter."""
    top, left = (int(v) for v in torch.randint(0, 5, (2,)))
    crop = torch.nn.functional.pad(image, (2, 2, 2, 2))[
        :, top : top + image.shape[1], left : left + image.shape[2]
    ]
    if float(torch.rand(1)) < 0.5:
        crop = crop.flip(-1)
    return crop * (0.8 + 0.4 * torch.rand(1))


class AugmentedPairs(Dataset):  # type: ignore[type-arg]
    """torchvision's shape: `(augmented float32 tensor, int label)`, augmentation from torch's global RNG."""

    def __len__(self) -> int:
        return SIZE

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        return _augment(_decoded(index)), index % 10


class Sample(NamedTuple):
    image: torch.Tensor
    label: int


class AugmentedNamedTuples(AugmentedPairs):
    def __getitem__(self, index: int) -> Sample:  # type: ignore[override]
        return Sample(_augment(_decoded(index)), index % 10)


class AugmentedTensors(AugmentedPairs):
    """A bare tensor per sample (self-supervised pretraining): no label, no index anywhere in the sample."""

    def __getitem__(self, index: int) -> torch.Tensor:  # type: ignore[override]
        return _augment(_decoded(index))


class AugmentedDicts(AugmentedPairs):
    """A dict without any index-like key (HF-style `pixel_values` / `labels`)."""

    def __getitem__(self, index: int) -> dict[str, Any]:  # type: ignore[override]
        return {"pixel_values": _augment(_decoded(index)), "labels": index % 10}


class SeedExample(Dataset):  # type: ignore[type-arg]
    """The seed article's example: 500 samples, 10 ms each, a float32 3x224x224 image from torch.randn."""

    def __len__(self) -> int:
        return 500

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        time.sleep(0.01)
        return torch.randn(3, 224, 224), index % 10


class ShuffledInside(Dataset):  # type: ignore[type-arg]
    """Returns a different file for the same index in each run: the dataset reshuffles with fresh entropy."""

    def __init__(self) -> None:
        self.order = np.random.default_rng().permutation(SIZE)

    def __len__(self) -> int:
        return SIZE

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        real = int(self.order[index])
        return _decoded(real), real % 10


class HangsAtFive(Dataset):  # type: ignore[type-arg]
    """A read that never returns (a network file system gone away): sample 5 blocks forever."""

    def __len__(self) -> int:
        return SIZE

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if index == 5:
            time.sleep(3600)
        return _decoded(index), index % 10


class HangsInWorkers(HangsAtFive):
    """Sample 5 blocks only inside a DataLoader worker (a connection pool that breaks after fork)."""

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if index == 5 and get_worker_info() is not None:
            time.sleep(3600)
        return _decoded(index), index % 10


class Sluggish(HangsAtFive):
    """Slow but alive: 0.4 s per sample (a cold object store). The run cannot finish in a short budget."""

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        time.sleep(0.4)
        return _decoded(index), index % 10


HOARD_CAP = 3 << 30  # never more than this, whatever limit it runs under: the test cannot fill the machine
HOARD_STEP = 64 << 20


class Hoards(Dataset):  # type: ignore[type-arg]
    """Every sample keeps 64 MiB more (written, so it is resident) until an allocation fails, as a dataset
    that caches decoded samples without bound does; it stops by itself at HOARD_CAP. The largest amount it
    held is written to $ENVGUARD_TEST_HOARD (one line per process) when an allocation fails."""

    held: ClassVar[list[bytes]] = []
    step: ClassVar[int] = HOARD_STEP
    pieces: ClassVar[int] = 1  # allocations of `step` per sample

    def __len__(self) -> int:
        return 256

    def __getitem__(self, index: int) -> torch.Tensor:
        for _ in range(self.pieces):
            if len(self.held) * self.step >= HOARD_CAP:
                break
            try:
                self.held.append(b"\x01" * self.step)
            except MemoryError:
                import os

                with open(os.environ["ENVGUARD_TEST_HOARD"], "a") as out:
                    out.write(f"{len(self.held) * self.step}\n")
                raise
        return torch.full((4,), index)


class Creeps(Hoards):
    """The same in 256 KiB steps (64 MiB a sample), as a cache of small decoded samples grows: it meets the
    limit with nothing to spare, so what follows the MemoryError (a traceback, a message to the main process,
    a thread) finds no memory either."""

    held: ClassVar[list[bytes]] = []
    step: ClassVar[int] = 256 << 10
    pieces: ClassVar[int] = 256


class ReadsItsLimits(Dataset):  # type: ignore[type-arg]
    """Writes the "Max processes" line of /proc/self/limits, with its PID, to $ENVGUARD_TEST_LIMITS, once per
    process that reads a sample (the main process with --workers 0, each worker otherwise)."""

    seen: ClassVar[set[int]] = set()

    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int) -> torch.Tensor:
        import os

        if os.getpid() not in self.seen:
            self.seen.add(os.getpid())
            with open("/proc/self/limits") as limits:
                line = next(x for x in limits if x.startswith("Max processes"))
            with open(os.environ["ENVGUARD_TEST_LIMITS"], "a") as out:
                out.write(f"{os.getpid()} {os.getppid()} {line}")
        return torch.full((4,), index)
