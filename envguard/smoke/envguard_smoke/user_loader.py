"""The user's own DataLoader: `FILE.py:NAME` where NAME() returns a DataLoader or `(dataset, loader_kwargs)`.

Bad input (no such file or name, NAME raises, returns the wrong type) is a LoaderError whose message is one
line naming FILE.py:NAME and what was expected; main.py hands it to envguard, which exits 2 with it.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Any, Callable, Dict

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


WATCH: Dict[str, Any] = {"dir": None, "label": None}  # the watch folder (main sets it) and FILE.py:NAME


def watch_phase(text: str) -> None:
    """What the --loader run is doing now, for envguard to name should it stop us at the budget."""
    from . import heartbeat

    heartbeat.phase(WATCH["dir"], "--loader %s: %s" % (WATCH["label"], text))


def make(function: Callable[[], Any], label: str) -> Any:
    """Call the user's function and check what it returned."""
    from torch.utils.data import DataLoader, Dataset, IterableDataset

    WATCH["label"] = label
    watch_phase("calling %s(), which had not returned" % label.split(":")[-1])
    try:
        value = function()
    except Exception as exc:
        raise LoaderError(
            "--loader %s raised %s; expected it to return %s" % (label, _last_line(exc), EXPECTED)
        ) from None
    watch_phase("checking what %s() returned" % label.split(":")[-1])
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
    """The loader's own settings, for the report (what envguard ran as given): the keys of envguard's one
    DataLoader Setting, as watch's hook reads them too."""
    sampler = getattr(loader, "sampler", None)
    torch = sys.modules.get("torch")
    return {
        "num_workers": int(loader.num_workers),
        "batch_size": loader.batch_size,
        "sampler": type(sampler).__name__ if sampler is not None else None,
        "generator": loader.generator is not None or getattr(sampler, "generator", None) is not None,
        "persistent_workers": bool(loader.persistent_workers),
        "prefetch_factor": loader.prefetch_factor,
        "pin_memory": bool(loader.pin_memory),
        "worker_init_fn": getattr(loader.worker_init_fn, "__qualname__", None),
        "collate_fn": getattr(loader.collate_fn, "__qualname__", None),
        "dataset": type(getattr(loader, "dataset", None)).__name__,
        "threads": int(torch.get_num_threads()) if torch is not None else None,
    }


def _last_line(exc: BaseException) -> str:
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def checks(settings: Dict[str, Any], deadline: float) -> Dict[str, Any]:
    """Two runs of the user's loader, each from a fresh NAME() call with the global torch RNG in another state
    (as when other code draws before the loop): the order must repeat; epoch 2 must differ from epoch 1; each
    batch of both epochs must be what the user's collate_fn builds from those indices (identity by index),
    with `dataset.set_epoch(e)` reaching the workers."""
    import torch

    from . import identity

    build = factory(settings["loader"])
    limit = int((settings.get("crossproc") or {}).get("limit", 32))
    torch.manual_seed(1)
    first = build()
    record: Dict[str, Any] = {"settings": settings_of(first), "limit": limit}
    from torch.utils.data import IterableDataset

    if isinstance(first.dataset, IterableDataset):  # no sampler: nothing to record here
        record["iterable"] = True
        return record
    watch_phase("reading two epochs through your loader")
    del identity.FIRST_BATCH_S[:]
    record["run1"], rows = identity.walk(first, 2, limit, wrap=_watched)
    record["first_batch_s"] = identity.FIRST_BATCH_S[0] if first.num_workers else None
    record["identity"] = identity.record(first, rows)
    del first
    torch.manual_seed(2)
    watch_phase("reading a second run of your loader")
    record["run2"], _rows = identity.walk(build(), 1, limit, judge=False, wrap=_watched)
    return record


def _watched(dataset: Any) -> Any:
    """The dataset with each read recorded in the watch folder (a hung sample names itself)."""
    from .identity import Forwarding

    return Forwarding(dataset, WATCH["dir"]) if WATCH["dir"] else dataset
