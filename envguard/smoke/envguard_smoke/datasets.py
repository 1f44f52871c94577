"""Datasets for the smoke test: synthetic I/O-bound and CPU-bound ones, a folder of files, and the user's own.

All are module-level classes with plain attributes, so they pickle for spawn/forkserver workers. Payloads are
deterministic functions of the index (float32, like a decoded, normalised image), so a digest names the
sample.
"""

from __future__ import annotations

import importlib
import os
import random
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from torch.utils.data import Dataset, IterableDataset, get_worker_info

from .canonical import digest, fields, identity

try:  # numpy is optional in the target environment
    import numpy
except ImportError:  # pragma: no cover - depends on the environment
    numpy = None  # type: ignore[assignment]

Shape = Tuple[int, ...]


def _payload(index: int, shape: Shape) -> Any:
    """A decoded, normalised image: float32 like the seed's example (18.4 MiB per batch of 32 x 3x224x224)."""
    return torch.full(shape, float(index % 251) / 251.0, dtype=torch.float32)


class IOBound(Dataset):  # type: ignore[type-arg]
    """Each sample waits `latency_ms` (a network or disk read) and costs almost no CPU."""

    def __init__(self, size: int, latency_ms: float, shape: Shape) -> None:
        self.size, self.latency, self.shape = size, latency_ms / 1000.0, tuple(shape)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> Dict[str, Any]:
        time.sleep(self.latency)
        return {"index": index, "image": _payload(index, self.shape), "label": index % 10}


class CPUBound(Dataset):  # type: ignore[type-arg]
    """Each sample burns `burn_ms` of this thread's CPU time (decoding, augmentation)."""

    def __init__(self, size: int, burn_ms: float, shape: Shape) -> None:
        self.size, self.burn, self.shape = size, burn_ms / 1000.0, tuple(shape)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> Dict[str, Any]:
        # CPU time, not wall time: oversubscribed workers then share cores, as real decoding would.
        until = time.thread_time() + self.burn
        spins = 0
        while time.thread_time() < until:
            spins += 1
        return {"index": index, "image": _payload(index, self.shape), "label": index % 10}


class Augmented(Dataset):  # type: ignore[type-arg]
    """Per-sample random augmentation drawn from the global torch, NumPy and `random` generators."""

    def __init__(self, size: int, shape: Shape = (3, 8, 8)) -> None:
        self.size, self.shape = size, tuple(shape)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> Dict[str, Any]:
        item: Dict[str, Any] = {"index": index, "image": _payload(index, self.shape)}
        item["torch"] = torch.rand(2)
        item["random"] = random.random()
        if numpy is not None:
            item["numpy"] = numpy.random.random(2)
        return item


class Folder(Dataset):  # type: ignore[type-arg]
    """The files under a folder (sorted by relative path), each read as a uint8 tensor."""

    def __init__(self, root: str, limit: Optional[int] = None) -> None:
        self.root = root
        found: List[str] = []
        for folder, dirs, names in os.walk(root):
            dirs.sort()
            found.extend(os.path.relpath(os.path.join(folder, n), root) for n in sorted(names))
        self.files = found[:limit] if limit is not None else found

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> Dict[str, Any]:
        with open(os.path.join(self.root, self.files[index]), "rb") as handle:
            data = bytearray(handle.read())
        tensor = torch.frombuffer(data, dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
        return {"index": index, "data": tensor}


def collate_list(batch: List[Any]) -> List[Any]:
    """Keep samples as a list (the determinism runs look at each sample, not at stacked tensors)."""
    return batch


def collate_ragged(batch: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Files differ in size: keep their tensors in a list, stack the indices."""
    return {"index": torch.tensor([s["index"] for s in batch]), "data": [s["data"] for s in batch]}


class DatasetImportError(ValueError):
    """The --dataset module cannot be imported; the message names the file and line and what to do."""


def _import_failure(exc: BaseException, path: str, spec: str) -> str:
    """`FILE:LINE: SyntaxError: ...` (or the exception the import raised, at the deepest line of the user's
    file), then what to do, in one line."""
    if isinstance(exc, SyntaxError) and exc.filename:
        where, line, what = exc.filename, exc.lineno, "SyntaxError: %s" % exc.msg
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        mine = [f for f in frames if os.path.abspath(f.filename) == path] or frames[-1:]
        where = mine[-1].filename if mine else path
        line = mine[-1].lineno if mine else None
        what = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
    return "%s:%s: %s (importing --dataset %s failed: fix that line; `python %s` shows the same error)" % (
        where,
        line if line is not None else "?",
        what,
        spec,
        path,
    )


def load_user(spec: str) -> Callable[[], Any]:
    """`path/to/module.py:NAME` -> a zero-argument factory for the user's Dataset (a class or a function).

    The module is imported by name from its folder (put first on sys.path) so spawn workers can import it too.
    """
    path, sep, name = spec.rpartition(":")
    if not sep or not path.endswith(".py") or not name:
        raise ValueError("--dataset must look like path/to/module.py:NAME, got %r" % spec)
    folder, filename = os.path.split(os.path.abspath(path))
    if not os.path.isfile(os.path.join(folder, filename)):
        raise ValueError("--dataset %s: no such file" % path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(filename[: -len(".py")])
    except Exception as exc:  # a SyntaxError, or the module raised while it was imported
        raise DatasetImportError(_import_failure(exc, os.path.join(folder, filename), spec)) from exc
    factory = getattr(module, name, None)
    if not callable(factory):
        raise ValueError("--dataset %s: %s is not a Dataset class or a function returning one" % (path, name))
    return factory  # type: ignore[no-any-return]


def worker_id() -> int:
    info = get_worker_info()
    return -1 if info is None else int(info.id)


def _peek_global_rngs() -> Dict[str, Any]:
    """The next draw of each global generator, without consuming it (the dataset's own draws stay the
    same)."""
    state = torch.get_rng_state()
    draws: Dict[str, Any] = {"torch": float(torch.rand(1).item())}
    torch.set_rng_state(state)
    py_state = random.getstate()
    draws["random"] = random.random()
    random.setstate(py_state)
    if numpy is not None:
        np_state = numpy.random.get_state()
        draws["numpy"] = float(numpy.random.random())
        numpy.random.set_state(np_state)
    return draws


def observe(item: Any, name: Optional[str] = None) -> Dict[str, Any]:
    """What the determinism checks need of one sample: worker, identity and a digest per field.

    `name` is the sample's identity when the caller knows it (the index the sampler asked for); only an
    IterableDataset, which has no sampler, falls back to an index-like key or the sample's content."""
    digests = {key: digest(value)[:16] for key, value in fields(item).items()}
    for key, value in _peek_global_rngs().items():
        digests["global:" + key] = digest(value)[:16]
    return {"w": worker_id(), "id": name if name is not None else identity(item)[:24], "f": digests}


def index_name(index: Any) -> str:
    """The identity of the sample the sampler asked for: `index:17` (any hashable index a sampler yields)."""
    return "index:%s" % (index if isinstance(index, int) else repr(index)[:64])


class Observed(Dataset):  # type: ignore[type-arg]
    """A map-style dataset whose samples are replaced by their observations (computed in the worker); the
    index travels with each observation, so augmentation never looks like a change of order."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, index: Any) -> Dict[str, Any]:
        return observe(self.inner[index], index_name(index))


class ObservedIterable(IterableDataset):  # type: ignore[type-arg]
    """The same for an IterableDataset."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __iter__(self) -> Any:
        for item in self.inner:
            yield observe(item)


def is_iterable(dataset: Any) -> bool:
    return isinstance(dataset, IterableDataset)


def sized(dataset: Any) -> Optional[int]:
    try:
        return len(dataset)
    except TypeError:
        return None


def batch_bytes(batch: Any) -> int:
    """Bytes of tensor data in a collated batch (what crosses /dev/shm from a worker)."""
    if hasattr(batch, "element_size") and hasattr(batch, "numel"):
        return int(batch.numel() * batch.element_size())
    if isinstance(batch, dict):
        return sum(batch_bytes(v) for v in batch.values())
    if isinstance(batch, (list, tuple)):
        return sum(batch_bytes(v) for v in batch)
    return int(getattr(batch, "nbytes", 0) or 0)


def seed_everything(seed: int) -> None:
    """What a careful training script does first: seed torch, numpy and random in the main process."""
    torch.manual_seed(seed)
    random.seed(seed)
    if numpy is not None:
        numpy.random.seed(seed % 2**32)
