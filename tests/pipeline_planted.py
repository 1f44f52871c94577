"""Input pipelines with planted problems, written the way training code is written, each with a near-twin that
must not trigger: for `envguard smoke --dataset/--loader tests/pipeline_planted.py:NAME` (issue 10)."""

from __future__ import annotations

import os
import sqlite3
import tempfile
import zlib
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

SIZE = 64
CLASSES = ("cat", "dog", "bird", "fish", "frog", "horse", "ship")


def _paths() -> list[str]:
    return [f"train/{CLASSES[i % 7]}/img_{i:05d}.jpg" for i in range(SIZE)]


def _decode(path: str) -> torch.Tensor:
    """What decoding `path` gives: a fixed small image per path."""
    return torch.full((3, 4, 4), float(zlib.crc32(path.encode()) % 997) / 997.0)


def normalize(image: torch.Tensor) -> torch.Tensor:
    return (image - 0.5) / 0.25


class Files(Dataset):  # type: ignore[type-arg]
    """An ImageFolder-like dataset: a list of paths, a transform, a label per class name."""

    def __init__(self, transform: Any = normalize) -> None:
        self.files = sorted(_paths())
        self.transform = transform

    def __len__(self) -> int:
        return len(self.files)

    def label(self, path: str) -> int:
        return CLASSES.index(path.split("/")[1])

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        path = self.files[index]
        return self.transform(_decode(path)), self.label(path)


# -- start-method safety
# -----------------------------------------------------------------------------------------
def lambda_transform() -> Files:
    """The transform is a lambda: fine under fork, cannot be pickled for spawn/forkserver workers."""
    return Files(transform=lambda image: (image - 0.5) / 0.25)


def module_transform() -> Files:
    """Twin: the same transform as a module-level function."""
    return Files(transform=normalize)


def _database() -> str:
    path = os.path.join(tempfile.gettempdir(), f"envguard-planted-{os.getuid()}.sqlite")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, path TEXT)")
        conn.executemany("INSERT OR REPLACE INTO rows VALUES (?, ?)", list(enumerate(_paths())))
    return path


class SqliteRows(Dataset):  # type: ignore[type-arg]
    """Opens its sqlite3 connection in __init__: the connection cannot be pickled into spawn workers."""

    def __init__(self) -> None:
        self.db = _database()
        self.conn = sqlite3.connect(self.db, check_same_thread=False)

    def __len__(self) -> int:
        return SIZE

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        (path,) = self.conn.execute("SELECT path FROM rows WHERE id = ?", (index,)).fetchone()
        return _decode(path), index % 7


class LazySqliteRows(SqliteRows):
    """Twin: opens the connection on first use, in whichever process reads."""

    def __init__(self) -> None:
        self.db = _database()
        self.conn: sqlite3.Connection | None = None

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if self.conn is None:
            self.conn = sqlite3.connect(self.db)
        return super().__getitem__(index)


# -- cross-process determinism
# -----------------------------------------------------------------------------------
class DedupedFiles(Files):
    """Deduplicates the file list with a set: the order of the strings changes with PYTHONHASHSEED."""

    def __init__(self) -> None:
        super().__init__()
        self.files = list(set(_paths() + _paths()[:8]))


class SortedDedupedFiles(Files):
    """Twin: the same deduplication, sorted."""

    def __init__(self) -> None:
        super().__init__()
        self.files = sorted(set(_paths() + _paths()[:8]))


class HashedLabels(Files):
    """Buckets class names with hash(): the label of a file changes with PYTHONHASHSEED."""

    def label(self, path: str) -> int:
        return hash(path.split("/")[1]) % 7


class CrcLabels(Files):
    """Twin: the same bucketing with a stable hash."""

    def label(self, path: str) -> int:
        return zlib.crc32(path.split("/")[1].encode()) % 7


class NoisyAugment(Files):
    """Augmentation from the global RNGs (seeded per worker by PyTorch): must not look hash-salt dependent."""

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        image, label = super().__getitem__(index)
        return image + 0.01 * torch.randn(3, 4, 4) + float(np.random.random()), label


# -- the user's own loader
# ---------------------------------------------------------------------------------------
def unseeded_loader() -> DataLoader:  # type: ignore[type-arg]
    """The most common reproducibility bug: shuffle=True without a seeded generator."""
    return DataLoader(Files(), batch_size=8, shuffle=True, num_workers=0)


def seeded_loader() -> DataLoader:  # type: ignore[type-arg]
    """Twin: the same loader with its own seeded generator."""
    return DataLoader(
        Files(), batch_size=8, shuffle=True, num_workers=0, generator=torch.Generator().manual_seed(0)
    )


def kwargs_loader() -> tuple[Files, dict[str, Any]]:
    """`(dataset, loader_kwargs)` works as well as a DataLoader."""
    return Files(), {"batch_size": 8, "shuffle": True, "generator": torch.Generator().manual_seed(0)}


def lambda_loader() -> DataLoader:  # type: ignore[type-arg]
    """A DataLoader whose collate_fn is a lambda (spawn cannot start its workers)."""
    return DataLoader(Files(), batch_size=8, num_workers=2, collate_fn=lambda batch: batch)


def raising_loader() -> DataLoader:  # type: ignore[type-arg]
    raise FileNotFoundError("/data/imagenet/train: no such directory")


def wrong_type_loader() -> list[int]:
    return [1, 2, 3]


# -- per-worker memory
# -------------------------------------------------------------------------------------------
PATHS = 400_000


class PathList(Dataset):  # type: ignore[type-arg]
    """ImageFolder's shape: a large Python list of path strings (copy-on-read in every forked worker)."""

    def __init__(self) -> None:
        self.samples = [f"/data/imagenet/train/n{i % 1000:08d}/img_{i:08d}.JPEG" for i in range(PATHS)]

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.tensor(len(self.samples[index]))


class PathArray(PathList):
    """Twin: the same paths as one numpy array of bytes (no per-item refcounts to touch)."""

    def __init__(self) -> None:
        super().__init__()
        self.samples = np.array(self.samples, dtype=np.bytes_)  # type: ignore[assignment]


def iterable_loader() -> DataLoader:  # type: ignore[type-arg]
    """A streaming dataset: no sampler order to check; its stream is read by position across interpreters."""
    from torch.utils.data import IterableDataset

    class Stream(IterableDataset):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            for path in sorted(_paths()):
                yield _decode(path)

    return DataLoader(Stream(), batch_size=8)


# -- state the training loop sets between epochs (dataset.set_epoch) and persistent workers
# ---------------------------------------------------------------------------------------------------------
def _jitter(image: torch.Tensor, epoch: int, index: int) -> torch.Tensor:
    """A per-(epoch, index) seeded augmentation: the same sample in every process, another one each epoch."""
    generator = torch.Generator().manual_seed(epoch * 100_003 + index)
    return image + 0.1 * torch.rand(image.shape, generator=generator)


class EpochAugmented(Files):
    """Seeds its augmentation from the epoch the training loop sets with `train_set.set_epoch(epoch)`."""

    def __init__(self) -> None:
        super().__init__()
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        image, label = super().__getitem__(index)
        return _jitter(image, self.epoch, index), label


class SharedEpochAugmented(Files):
    """Twin: keeps the epoch in shared memory, which persistent workers read too."""

    def __init__(self) -> None:
        super().__init__()
        self.epoch = torch.zeros(1, dtype=torch.int64).share_memory_()

    def set_epoch(self, epoch: int) -> None:
        self.epoch[0] = epoch

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        image, label = super().__getitem__(index)
        return _jitter(image, int(self.epoch[0]), index), label


def _epoch_loader(dataset: Dataset, persistent: bool) -> DataLoader:  # type: ignore[type-arg]
    return DataLoader(
        dataset,
        batch_size=8,
        shuffle=True,
        num_workers=2,
        persistent_workers=persistent,
        generator=torch.Generator().manual_seed(0),
    )


def stale_epoch_loader() -> DataLoader:  # type: ignore[type-arg]
    """persistent_workers=True keep the dataset copy they started with: set_epoch(1) never reaches them."""
    return _epoch_loader(EpochAugmented(), persistent=True)


def shared_epoch_loader() -> DataLoader:  # type: ignore[type-arg]
    """Twin: the epoch lives in shared memory."""
    return _epoch_loader(SharedEpochAugmented(), persistent=True)


def fresh_workers_epoch_loader() -> DataLoader:  # type: ignore[type-arg]
    """Twin: workers start afresh each epoch (persistent_workers=False) and copy the current epoch."""
    return _epoch_loader(EpochAugmented(), persistent=False)


# -- identity by index through the user's collate_fn
# ---------------------------------------------------------------------------------------------------------
def dict_collate(batch: list[tuple[torch.Tensor, int]]) -> dict[str, Any]:
    """A dict-of-lists collate (detection/NLP style): stacked images, labels and names as Python lists."""
    return {
        "image": torch.stack([image for image, _ in batch]),
        "label": [label for _, label in batch],
        "name": [CLASSES[label] for _, label in batch],
    }


def tuple_collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor]:
    images, labels = zip(*batch, strict=True)
    return torch.stack(images), torch.tensor(labels)


def dict_collate_loader() -> DataLoader:  # type: ignore[type-arg]
    return DataLoader(
        EpochAugmented(),
        batch_size=8,
        shuffle=True,
        num_workers=2,
        collate_fn=dict_collate,
        generator=torch.Generator().manual_seed(0),
    )


def tuple_collate_loader() -> DataLoader:  # type: ignore[type-arg]
    return DataLoader(
        Files(), batch_size=8, num_workers=2, collate_fn=tuple_collate, prefetch_factor=4, pin_memory=False
    )


class NumberedCollate:
    """A collate_fn that numbers the batches it builds: each worker counts its own, so the numbers depend on
    which process collates (state that assumes one process)."""

    def __init__(self) -> None:
        self.built = 0

    def __call__(self, batch: list[tuple[torch.Tensor, int]]) -> dict[str, Any]:
        self.built += 1
        return {"batch_number": self.built, **dict_collate(batch)}


def numbered_collate_loader() -> DataLoader:  # type: ignore[type-arg]
    return DataLoader(Files(), batch_size=8, num_workers=2, collate_fn=NumberedCollate())


def noisy_loader() -> DataLoader:  # type: ignore[type-arg]
    """Random augmentation on every read: identity by content cannot be judged, and must not FAIL."""
    return DataLoader(NoisyAugment(), batch_size=8, num_workers=2)


class ShardedFiles(Files):
    """IterableDataset-style sharding copied into a map-style dataset: worker_init_fn gives each worker an
    offset, so index i reads another file in worker 1 than in the main process."""

    offset = 0

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        return super().__getitem__((index + self.offset) % len(self))


def shard_by_worker(worker_id: int) -> None:
    info = torch.utils.data.get_worker_info()
    info.dataset.offset = worker_id * len(info.dataset) // info.num_workers


def worker_sharded_loader() -> DataLoader:  # type: ignore[type-arg]
    return DataLoader(ShardedFiles(), batch_size=8, num_workers=2, worker_init_fn=shard_by_worker)


def seed_by_worker(worker_id: int) -> None:
    """Twin: a worker_init_fn that only seeds (it changes no sample)."""
    np.random.seed(torch.initial_seed() % 2**32)


def worker_seeded_loader() -> DataLoader:  # type: ignore[type-arg]
    return DataLoader(ShardedFiles(), batch_size=8, num_workers=2, worker_init_fn=seed_by_worker)


# -- a loader that hangs
# ---------------------------------------------------------------------------------------------------------
def hanging_loader() -> DataLoader:  # type: ignore[type-arg]
    """Waits for a mount that never answers before it builds the loader."""
    import time

    time.sleep(3600)
    return DataLoader(Files(), batch_size=8)


class HangsAtFive(Files):
    """A read without a timeout: sample 5 never returns (a dead NFS mount, a lock held elsewhere)."""

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if index == 5:
            import time

            time.sleep(3600)
        return super().__getitem__(index)


def hanging_dataset_loader() -> DataLoader:  # type: ignore[type-arg]
    return DataLoader(HangsAtFive(), batch_size=4, num_workers=2)


# -- timing the user's own loader (--sweep)
# ---------------------------------------------------------------------------------------------------------
class Reads(Dataset):  # type: ignore[type-arg]
    """Each sample waits `wait_ms` for storage (an I/O-bound read), then decodes a small image."""

    def __init__(self, count: int = 1024, wait_ms: float = 2.0) -> None:
        self.paths = [f"shard-{i // 256:03d}/img_{i:05d}.jpg" for i in range(count)]
        self.wait_s = wait_ms / 1000.0

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> dict[str, Any]:
        import time

        if self.wait_s:
            time.sleep(self.wait_s)
        return {"image": _decode(self.paths[index]), "path": self.paths[index]}


def keyed_collate(batch: list[dict[str, Any]]) -> dict[str, Any]:
    return {"image": torch.stack([b["image"] for b in batch]), "path": [b["path"] for b in batch]}


def _timed_loader(dataset: Dataset) -> DataLoader:  # type: ignore[type-arg]
    from torch.utils.data import RandomSampler

    return DataLoader(
        dataset,
        batch_size=16,
        sampler=RandomSampler(dataset, generator=torch.Generator().manual_seed(0)),
        num_workers=1,
        collate_fn=keyed_collate,
        prefetch_factor=4,
        persistent_workers=True,
    )


def storage_bound_loader() -> DataLoader:  # type: ignore[type-arg]
    """2 ms per sample: 32 ms of reading per batch of 16, so the per-sample cost bounds the rate."""
    return _timed_loader(Reads())


def overhead_bound_loader() -> DataLoader:  # type: ignore[type-arg]
    """Twin: no wait; microseconds per sample, so the per-batch overhead (collate, IPC) sets the rate and no
    ideal from the per-sample cost may be claimed."""
    return _timed_loader(Reads(wait_ms=0.0))


class MappedRows(Dataset):  # type: ignore[type-arg]
    """Twin of PathList: 16384 rows of 4 KiB in a memory-mapped .npy file (np.load(mmap_mode="r")). Reading
    maps page-cache pages into each worker (clean, file-backed, reclaimable): not copy-on-read."""

    ROWS, WIDTH = 16384, 1024

    def __init__(self) -> None:
        path = os.path.join(tempfile.gettempdir(), f"envguard-planted-rows-{os.getuid()}.npy")
        if not os.path.exists(path):
            rows = np.arange(self.ROWS * self.WIDTH, dtype=np.float32).reshape(self.ROWS, self.WIDTH)
            np.save(path + ".tmp.npy", rows)
            os.replace(path + ".tmp.npy", path)
        self.rows = np.load(path, mmap_mode="r")

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.tensor(float(self.rows[index].sum()))


class Frames(Dataset):  # type: ignore[type-arg]
    """Decoded 224x224 RGB float frames (588 KiB a sample): what fills /dev/shm when batches are in flight."""

    def __init__(self, count: int = 256) -> None:
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.full((3, 224, 224), float(index % 251))


class CollectingArray(PathArray):
    """Twin of PathArray whose worker runs a full cyclic collection once, well into its reads (as an automatic
    generation-2 collection comes when allocation-heavy code has made enough objects)."""

    reads = 0

    def __getitem__(self, index: int) -> Any:
        self.reads += 1
        if self.reads == 2000:  # each worker's own copy counts its own reads
            import gc

            gc.collect()
        return super().__getitem__(index)
