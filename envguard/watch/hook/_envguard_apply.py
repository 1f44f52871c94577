"""envguard watch --apply-and-measure, inside the job: run a bounded slice of it with a DataLoader setting
and/or a thread count put in, then stop it.

Loaded by sitecustomize.py (same folder, first on the job's PYTHONPATH; the underscore name shadows no stdlib
module) only when $ENVGUARD_WATCH_APPLY is set. Stdlib only, Python 3.8 syntax. The variable holds JSON:

    {"dataset": "Images", "settings": {"num_workers": 4, "prefetch_factor": 2, "persistent_workers": true,
     "pin_memory": false}, "threads": 1, "seconds": 15, "batches": 1000}

every key optional. `settings` replace those arguments in each `DataLoader(...)` call for `dataset` (the
dominant loader's dataset type name; every loader where it is null), prefetch_factor only with workers;
`threads` is given to torch.set_num_threads before that loader's first batch. Once that loader has run
`batches` steady batches or `seconds` of steady loop (sitecustomize's totals, each epoch's first batch kept
apart), its totals are flushed and SystemExit ends the job: the interpreter's normal exit, whose
multiprocessing handler ends the DataLoader workers. A value it cannot use turns the override off (the slice
still runs and stops) and is reported in the stream (`apply.error`); nothing here raises into the script but
that SystemExit.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
from typing import Any, Dict, Optional

APPLY_ENV = "ENVGUARD_WATCH_APPLY"
WHOLE = ("num_workers", "prefetch_factor")
FLAGS = ("persistent_workers", "pin_memory")
KEYS = ("dataset", "settings", "threads", "seconds", "batches")


def _count(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _settings(raw: Any) -> Dict[str, Any]:
    if not isinstance(raw, dict):
        raise ValueError("settings: %r is not an object" % (raw,))
    out = {}  # type: Dict[str, Any]
    for name, value in raw.items():
        if name in WHOLE:
            good = _count(value, 0 if name == "num_workers" else 1) or (
                name == "prefetch_factor" and value is None
            )
        elif name in FLAGS:
            good = isinstance(value, bool)
        else:
            raise ValueError("settings: unknown DataLoader argument %r" % (name,))
        if not good:
            raise ValueError("settings: %s=%r is not a valid value" % (name, value))
        out[name] = value
    return out


class Slice:
    """What this job is asked to run, what reached its loaders, and whether it stopped itself."""

    def __init__(self, text: str) -> None:
        self.dataset = None  # type: Optional[str]
        self.settings = {}  # type: Dict[str, Any]
        self.threads = None  # type: Optional[int]
        self.seconds = None  # type: Optional[float]
        self.batches = None  # type: Optional[int]
        self.loaders = 0  # DataLoader calls the settings were put into
        self.threads_set = None  # type: Optional[int]
        self.stopped = False
        self.error = ""
        try:
            self._decode(text)
        except Exception as exc:  # RecursionError from JSON nested too deep, too
            self.error = "%s=%s: %s; the override is off" % (APPLY_ENV, text[:200], exc)
            self.settings, self.threads, self.dataset = {}, None, None

    def _decode(self, text: str) -> None:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        unknown = sorted(set(raw) - set(KEYS))
        if unknown:
            raise ValueError("unknown key %r" % (unknown[0],))
        seconds, batches = raw.get("seconds"), raw.get("batches")
        if seconds is not None:  # the bounds first: a bad override still leaves a slice that stops
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
                raise ValueError("seconds: %r is not a positive number" % (seconds,))
            self.seconds = float(seconds)
        if batches is not None:
            if not _count(batches, 1):
                raise ValueError("batches: %r is not a positive whole number" % (batches,))
            self.batches = batches
        dataset, threads = raw.get("dataset"), raw.get("threads")
        if dataset is not None and not isinstance(dataset, str):
            raise ValueError("dataset: %r is not a type name" % (dataset,))
        if threads is not None and not _count(threads, 1):
            raise ValueError("threads: %r is not a positive whole number" % (threads,))
        self.settings = _settings(raw.get("settings") or {})
        self.dataset, self.threads = dataset, threads

    def report(self) -> Dict[str, Any]:
        """The stream's `apply` entry (decoded by watch/records.py's ApplyReport)."""
        return {
            "dataset": self.dataset,
            "settings": self.settings,
            "threads": self.threads,
            "loaders": self.loaders,
            "threads_set": self.threads_set,
            "stopped": self.stopped,
            "error": self.error,
        }

    def mine(self, dataset_name: Optional[str]) -> bool:
        return self.dataset is None or dataset_name == self.dataset

    def put(self, arguments: Dict[str, Any]) -> None:
        """The settings into one DataLoader call's bound arguments (torch refuses prefetch_factor and
        persistent_workers without workers)."""
        arguments.update(self.settings)
        if not arguments.get("num_workers"):
            arguments["prefetch_factor"], arguments["persistent_workers"] = None, False
        self.loaders += 1

    def set_threads(self) -> None:
        torch = sys.modules.get("torch")
        if self.threads and torch is not None:
            torch.set_num_threads(self.threads)
            self.threads_set = int(torch.get_num_threads())

    def due(self, stats: Dict[str, Any]) -> bool:
        """This loader's steady totals have reached the slice's bound."""
        if not self.mine(stats["settings"].get("dataset")):
            return False
        loop = stats["wait_s"] + stats["step_s"]
        return (self.batches is not None and stats["batches"] >= self.batches) or (
            self.seconds is not None and loop >= self.seconds
        )


def _init_wrapper(state: Any, slice_: Slice, original: Any) -> Any:
    signature = inspect.signature(original)

    @functools.wraps(original)  # its signature stays readable (Lightning re-creates loaders from it)
    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:  # the call is wrong as written: torch says so itself
            return original(self, *args, **kwargs)
        try:
            if slice_.mine(type(bound.arguments.get("dataset")).__name__):
                if slice_.settings:
                    slice_.put(bound.arguments)
                    args, kwargs = bound.args[1:], bound.kwargs
                slice_.set_threads()
        except Exception as exc:
            slice_.error = "applying the override: %s: %s; the override is off" % (type(exc).__name__, exc)
            slice_.settings, slice_.threads = {}, None
            state.flush(force=True)
        return original(self, *args, **kwargs)

    return __init__


def _next_wrapper(state: Any, slice_: Slice, original: Any) -> Any:
    @functools.wraps(original)
    def _next_data(self):  # type: ignore[no-untyped-def]
        batch = original(self)
        stats = self.__dict__.get("_envguard_stats")
        if stats is not None and not state.error and slice_.due(stats):
            slice_.stopped = True
            state.flush(force=True)
            raise SystemExit(0)
        return batch

    return _next_data


def install(state: Any, module: Any) -> None:
    """Wrap torch.utils.data.dataloader (`module`, already timed by sitecustomize) for `state.apply`'s slice:
    the DataLoader's arguments, then each iterator's `_next_data` on top of the timing's."""
    slice_ = state.apply
    loader_class = module.DataLoader
    loader_class.__init__ = _init_wrapper(state, slice_, loader_class.__init__)
    for name in ("_SingleProcessDataLoaderIter", "_MultiProcessingDataLoaderIter"):
        iterator_class = getattr(module, name)
        iterator_class._next_data = _next_wrapper(state, slice_, iterator_class._next_data)
    if slice_.error:
        state.flush(force=True)


def from_env() -> Optional[Slice]:
    """The slice asked for in the environment, or None where none was."""
    text = os.environ.get(APPLY_ENV)
    return Slice(text) if text else None
