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
