"""The user's own DataLoader: `FILE.py:NAME` where NAME() returns a DataLoader or `(dataset, loader_kwargs)`.

Bad input (no such file or name, NAME raises, returns the wrong type) is a LoaderError whose message is one
line naming FILE.py:NAME and what was expected; main.py hands it to envguard, which exits 2 with it.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Any, Callable, Dict, Iterator, List

EXPECTED = "a torch.utils.data.DataLoader or (dataset, loader_kwargs)"


class LoaderError(Exception):
    """A bad --loader: the message is the whole line the user sees."""


def factory(spec: str) -> Callable[[], Any]:
    """`FILE.py:NAME` -> a zero-argument function building a fresh DataLoader each call."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path.endswith(".py") or not name:
        raise LoaderError(
            "--loader %s: expected path/to/module.py:NAME (a function returning %s)" % (spec, EXPECTED)
        )
    folder, filename = os.path.split(os.path.abspath(path))
    if not os.path.isfile(os.path.join(folder, filename)):
        raise LoaderError("--loader %s: no such file" % path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # spawn/forkserver workers import the module by name from here too
    label = "%s:%s" % (filename, name)
    try:
        module = importlib.import_module(filename[: -len(".py")])
    except Exception as exc:
        raise LoaderError(
            "--loader %s: importing %s raised %s" % (label, filename, _last_line(exc))
        ) from None
    function = getattr(module, name, None)
    if not callable(function):
        raise LoaderError(
            "--loader %s: %s is not a function in %s (expected one returning %s)"
            % (label, name, filename, EXPECTED)
        )

    def build() -> Any:
        return make(function, label)

    return build


def make(function: Callable[[], Any], label: str) -> Any:
    """Call the user's function and check what it returned."""
    from torch.utils.data import DataLoader, Dataset, IterableDataset

    try:
        value = function()
    except Exception as exc:
        raise LoaderError(
            "--loader %s raised %s; expected it to return %s" % (label, _last_line(exc), EXPECTED)
        ) from None
    if isinstance(value, DataLoader):
        return value
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):
        dataset, kwargs = value
        if not isinstance(dataset, (Dataset, IterableDataset)) and not hasattr(dataset, "__getitem__"):
            raise LoaderError(
                "--loader %s returned (%s, kwargs); expected a Dataset as the first item"
                % (label, type(dataset).__name__)
            )
        try:
            return DataLoader(dataset, **kwargs)
        except (TypeError, ValueError) as exc:
            raise LoaderError(
                "--loader %s: DataLoader(dataset, **loader_kwargs) refused the kwargs: %s"
                % (label, _last_line(exc))
            ) from None
    raise LoaderError("--loader %s returned %s; expected %s" % (label, type(value).__name__, EXPECTED))


def settings_of(loader: Any) -> Dict[str, Any]:
    """The loader's own settings, for the report (what envguard ran as given)."""
    sampler = getattr(loader, "sampler", None)
    return {
        "num_workers": int(loader.num_workers),
        "batch_size": loader.batch_size,
        "sampler": type(sampler).__name__ if sampler is not None else None,
        "generator": loader.generator is not None or getattr(sampler, "generator", None) is not None,
        "persistent_workers": bool(loader.persistent_workers),
        "prefetch_factor": loader.prefetch_factor,
        "worker_init_fn": getattr(loader.worker_init_fn, "__qualname__", None),
        "collate_fn": getattr(loader.collate_fn, "__qualname__", None),
    }


def _last_line(exc: BaseException) -> str:
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


class Recording:
    """Wraps the loader's (batch) sampler and records the indices it hands out, in the main process, in the
    order the DataLoader dispatches (and, in order, delivers) them. Everything else runs as the user
    configured it."""

    def __init__(self, inner: Any, limit: int) -> None:
        self.inner, self.limit = inner, limit
        self.seen: List[Any] = []

    def __len__(self) -> int:
        return len(self.inner)

    def __iter__(self) -> Iterator[Any]:
        for item in self.inner:
            if len(self.seen) < self.limit:
                self.seen.extend(item if isinstance(item, (list, tuple)) else [item])
            yield item


def epoch_orders(loader: Any, epochs: int, limit: int) -> List[List[str]]:
    """The first `limit` indices of each epoch, iterating the real loader (its workers, collate_fn, ...)."""
    name = "batch_sampler" if loader.batch_sampler is not None else "sampler"
    out: List[List[str]] = []
    for _epoch in range(epochs):
        recording = Recording(getattr(loader, name), limit)
        # DataLoader forbids setting it once built: swap it in for this epoch, then put the user's back
        object.__setattr__(loader, name, recording)
        try:
            for _batch in loader:  # the user's workers, worker_init_fn and collate_fn run on each batch
                if len(recording.seen) >= limit:
                    break
        finally:
            object.__setattr__(loader, name, recording.inner)
        out.append([repr(i) for i in recording.seen[:limit]])
    return out


def checks(settings: Dict[str, Any], deadline: float) -> Dict[str, Any]:
    """Two runs of the user's loader, each from a fresh NAME() call with the global torch RNG in another state
    (as when other code draws before the loop): the order must repeat; epoch 2 must differ from epoch 1."""
    import torch

    build = factory(settings["loader"])
    limit = int((settings.get("crossproc") or {}).get("limit", 32))
    torch.manual_seed(1)
    first = build()
    record: Dict[str, Any] = {"settings": settings_of(first), "limit": limit}
    from torch.utils.data import IterableDataset

    if isinstance(first.dataset, IterableDataset):  # no sampler: nothing to record here
        record["iterable"] = True
        return record
    record["run1"] = epoch_orders(first, 2, limit)
    del first
    torch.manual_seed(2)
    record["run2"] = epoch_orders(build(), 1, limit)
    return record
