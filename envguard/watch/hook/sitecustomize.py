"""envguard watch's in-process DataLoader hook, loaded as `sitecustomize` from the first entry of PYTHONPATH.

Standalone (it runs under the job's interpreter): stdlib only, Python 3.8 syntax. It chains to any other
sitecustomize on the path, waits for `torch.utils.data.dataloader` to be imported, and wraps the iterators'
`_next_data` (the wait inside next() against the time between calls, wall and CPU clock, per loader) and the
fetchers' `fetch` (producing each batch: wall, CPU, run-queue delay, in whichever process loads it). Every
FLUSH seconds it appends one JSON line of running totals to $ENVGUARD_WATCH_DIR/<pid>.jsonl (decoded by
watch/streams.py into records.py's Structs: a field changed here changes there too), per-batch spans through
_envguard_spans.py. Its wrappers sit below torch's frames that warn, so warnings keep their origin. A failure
of its own disables it and is written to the stream; it never raises into the user's script.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.util
import json
import os
import runpy
import sys
import time
from typing import Any, Dict, List, Optional

if __name__ == "sitecustomize":  # the job's interpreter, this folder first on its path: per-batch spans
    import _envguard_spans as _spans  # type: ignore[import-not-found, unused-ignore]
else:  # envguard's own process (attach)
    from envguard.watch.hook import _envguard_spans as _spans

DIR_ENV = "ENVGUARD_WATCH_DIR"
FLUSH_ENV = "ENVGUARD_WATCH_FLUSH"
TARGET = "torch.utils.data.dataloader"
HERE = os.path.dirname(os.path.abspath(__file__))
WALLS_KEPT = 256  # per-batch loading times kept per dataset (their spread: how bursty loading is)
SCHEDSTAT = "/proc/thread-self/schedstat"
SECONDS = ("wait_s", "step_s", "wait_cpu_s", "step_cpu_s", "step_delay_s", "startup_s", "first_s")


class _State:
    """Running totals of this process's loaders; `error` set means the hook turned itself off."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.path = os.path.join(folder, "%d.jsonl" % os.getpid())
        self.pid = os.getpid()
        self.flush_s = float(os.environ.get(FLUSH_ENV) or 0.5)
        self.loaders = {}  # type: Dict[Any, Any]
        self.by_loader = {}  # type: Dict[Any, Any]
        self.error = ""
        self.patched, self.last_flush = False, 0.0
        self.env = {}  # type: Dict[Any, Any]
        self.fetches = {}  # type: Dict[Any, Any]
        self.worker = False
        self.at_exit = True  # a watched job flushes at exit; an in-process watch (attach) at detach
        self.finder = None  # type: Any
        self.restore: List[Any] = []  # (owner, name, original) of each wrap, put back by detach
        self.spans = _spans.tracer(folder)  # None unless watch asked for a trace
        self.apply = None  # type: Any  # --apply-and-measure's slice (_envguard_apply.Slice)

    def here(self) -> None:
        """In a forked DataLoader worker: start this process's own stream (the parent's totals: not ours)."""
        if os.getpid() == self.pid:
            return
        self.pid = os.getpid()
        self.path = os.path.join(self.folder, "%d.jsonl" % self.pid)
        self.loaders, self.by_loader, self.fetches = {}, {}, {}
        self.last_flush, self.worker = 0.0, True
        try:  # a worker ends through multiprocessing's exit, which runs its finalizers, not atexit
            import multiprocessing.util

            multiprocessing.util.Finalize(None, _at_exit, args=(self,), exitpriority=100)
        except Exception:
            pass

    def fetched(self, dataset: Any, wall: float, cpu: float, delay: float, off: float) -> None:
        """One batch produced (fetch + collate) in this process: its wall, CPU, run-queue and off-CPU seconds,
        all the fetching thread's (the process clock only where /proc/thread-self/schedstat is unreadable:
        in the main process it also counts the step's intra-op threads spinning beside the loading)."""
        self.here()
        name = type(dataset).__name__
        totals = self.fetches.get(name)
        if totals is None:
            totals = self.fetches[name] = {
                "dataset": name,
                "batches": 0,
                "wall_s": 0.0,
                "cpu_s": 0.0,
                "delay_s": 0.0,
                "off_s": 0.0,
                "walls": [],
            }
        totals["batches"] += 1
        totals["wall_s"] += wall
        totals["cpu_s"] += cpu
        totals["delay_s"] += delay
        totals["off_s"] += off
        if len(totals["walls"]) < WALLS_KEPT:
            totals["walls"].append(round(wall, 6))
        self.flush()

    def loader_stats(self, loader: Any) -> Dict[str, Any]:
        key = id(loader)
        stats = self.by_loader.get(key)
        if stats is None:
            stats = {"id": len(self.loaders), "settings": _settings(loader), "batches": 0, "epochs": 0}
            stats.update((name, 0.0) for name in SECONDS)
            self.by_loader[key] = stats
            self.loaders[stats["id"]] = stats
            self.env = self.env or _environment()
        return stats

    def line(self) -> Dict[str, Any]:
        rank = os.environ.get("RANK")
        return {
            "pid": os.getpid(),
            "t": time.time(),
            "rank": int(rank) if rank and rank.isdigit() else None,
            "env": self.env,
            "error": self.error,
            "loaders": [self.loaders[k] for k in sorted(self.loaders)],
            "ppid": os.getppid(),
            "worker": self.worker,
            "fetch": [self.fetches[k] for k in sorted(self.fetches)],
            "apply": self.apply.report() if self.apply is not None else None,
        }

    def flush(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_flush < self.flush_s:
            return
        self.last_flush = now
        if os.getpid() != self.pid:  # a forked DataLoader worker: its copy of the totals is not its own
            return
        _spans.flush(self.spans)
        _spans.append(self.path, json.dumps(self.line(), separators=(",", ":"), default=str) + "\n")

    def fail(self, where: str, exc: BaseException) -> None:
        self.error = "%s: %s: %s" % (where, type(exc).__name__, exc)
        try:
            self.flush(force=True)
        except Exception:  # the folder is gone: envguard is not listening any more
            pass


WHOLE = ("num_workers", "prefetch_factor", "batch_size")
FLAGS = ("pin_memory", "persistent_workers")


def _whole(value: Any) -> Optional[int]:
    """A setting that is a whole number, or None where the loader holds something else (unreadable)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _settings(loader: Any) -> Dict[str, Any]:
    workers = getattr(loader, "num_workers", None)
    out: Dict[str, Any] = {name: _whole(getattr(loader, name, None)) for name in WHOLE}
    out["num_workers"] = out["num_workers"] or 0
    out.update((name, bool(getattr(loader, name, None))) for name in FLAGS)
    if not workers:
        out["prefetch_factor"] = None  # unused without workers
    out["dataset"] = type(getattr(loader, "dataset", None)).__name__
    torch = sys.modules.get("torch")
    try:  # the training step's intra-op threads as the epoch begins (torch.set_num_threads, OMP_NUM_THREADS)
        out["threads"] = int(torch.get_num_threads()) if torch is not None else None
    except Exception:
        out["threads"] = None
    return out


def _environment() -> Dict[str, Any]:
    torch = sys.modules.get("torch")
    numpy = sys.modules.get("numpy")
    version = getattr(torch, "version", None)
    return {
        "python": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable,
        "torch": getattr(torch, "__version__", None),
        "torch_cuda": getattr(version, "cuda", None),
        "torch_git": getattr(version, "git_version", None),
        "numpy": getattr(numpy, "__version__", None),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


def _sched() -> Any:
    """(CPU seconds, run-queue seconds) of this thread so far (/proc/thread-self/schedstat), None where
    unreadable: the rest of a span's wall time is what the thread spent off the CPU (sleep, I/O)."""
    try:
        with open(SCHEDSTAT) as handle:
            fields = handle.read().split()
        return int(fields[0]) / 1e9, int(fields[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _wrap(state: _State, module: Any) -> None:
    """Stats per loader from `DataLoader._get_iterator`; timing in each iterator class's `_next_data`."""
    loader_class = module.DataLoader
    original_get = loader_class._get_iterator

    def _get_iterator(self):  # type: ignore[no-untyped-def]
        iterator = original_get(self)
        if not state.error:
            try:
                iterator._envguard_stats = state.loader_stats(self)
                iterator._envguard_last = None
            except Exception as exc:
                state.fail("DataLoader iterator setup", exc)
        return iterator

    state.restore.append((loader_class, "_get_iterator", original_get))
    loader_class._get_iterator = _get_iterator
    for name in ("_SingleProcessDataLoaderIter", "_MultiProcessingDataLoaderIter"):
        _wrap_next(state, getattr(module, name))


def _wrap_next(state: _State, iterator_class: Any) -> None:
    original_next = iterator_class._next_data

    def _next_data(self):  # type: ignore[no-untyped-def]
        if state.error:
            return original_next(self)
        begin = (time.perf_counter(), time.process_time(), _sched())
        try:
            batch = original_next(self)
        except StopIteration:
            _count(state, self, begin, done=True)
            raise
        _count(state, self, begin, done=False)
        return batch

    state.restore.append((iterator_class, "_next_data", original_next))
    iterator_class._next_data = _next_data


def _wrap_fetch(state: _State, fetch_module: Any) -> None:
    """Time producing each batch (the dataset reads and collate_fn) in the process that loads it."""
    for name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"):
        fetcher = getattr(fetch_module, name)
        original = fetcher.fetch

        def fetch(self, possibly_batched_index, _original=original):  # type: ignore[no-untyped-def]
            if state.error:
                return _original(self, possibly_batched_index)
            start, cpu, sched = time.perf_counter(), time.process_time(), _sched()
            data = _original(self, possibly_batched_index)
            try:
                wall, cpu, after = time.perf_counter() - start, time.process_time() - cpu, _sched()
                _spans.fetched(state.spans, type(self.dataset).__name__, start, start + wall)
                if sched is None or after is None:
                    delay, off = 0.0, max(0.0, wall - cpu)
                else:  # the loading thread's own CPU: what one worker thread would spend on the batch
                    cpu, delay = after[0] - sched[0], after[1] - sched[1]
                    off = max(0.0, wall - cpu - delay)
                state.fetched(self.dataset, wall, cpu, delay, off)
            except Exception as exc:
                state.fail("DataLoader fetch timing", exc)
            return data

        state.restore.append((fetcher, "fetch", original))
        fetcher.fetch = fetch


def _count(state: _State, iterator: Any, begin: Any, done: bool) -> None:
    """One next(): its wait and, since the last one, the step (wall, CPU, main thread's run-queue wait)."""
    try:
        (start, cpu, sched), end, cpu_end = begin, time.perf_counter(), time.process_time()
        stats = iterator.__dict__.get("_envguard_stats")
        if stats is None:
            return
        last = iterator.__dict__.get("_envguard_last")
        if done:
            stats["epochs"] += 1
            iterator._envguard_last = None  # the gap to the next epoch's first batch is not a step
            state.flush(force=True)
            return
        if last is None:  # the first batch of an epoch: worker start-up, kept apart from the steady state
            stats["startup_s"] += end - start
            if not stats["first_s"]:
                stats["first_s"] = end - start
        else:
            stats["batches"] += 1
            stats["wait_s"] += end - start
            stats["step_s"] += start - last[0]
            stats["wait_cpu_s"] += cpu_end - cpu
            stats["step_cpu_s"] += cpu - last[1]
            if sched is not None and last[2] is not None:
                stats["step_delay_s"] += sched[1] - last[2][1]
        _spans.batch(state.spans, stats, start, end, last)
        iterator._envguard_last = (end, cpu_end, _sched())
        state.flush()
    except Exception as exc:
        state.fail("DataLoader timing", exc)


class _Finder(importlib.abc.MetaPathFinder):
    """Lets the real import of torch.utils.data.dataloader run, then wraps its iterator base class."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name != TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module
        state = self.state

        def exec_module(module):  # type: ignore[no-untyped-def]
            original(module)
            _patch(state, module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _patch(state: _State, module: Any) -> None:
    try:
        _wrap(state, module)
        _wrap_fetch(state, module._utils.fetch)
        if state.apply is not None:
            sys.modules["_envguard_apply"].install(state, module)
        state.patched = True
        if state.at_exit:
            atexit.register(_at_exit, state)
    except Exception as exc:
        state.fail("patching torch.utils.data", exc)


def _at_exit(state: _State) -> None:
    try:
        if state.loaders or state.fetches or state.error:  # a process that never loaded has nothing to say
            state.flush(force=True)
    except Exception:
        pass


def _chain() -> None:
    """Run the sitecustomize this one shadows (the next one on sys.path), as Python would have."""
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == HERE:
            continue
        for candidate in (
            os.path.join(entry, "sitecustomize.py"),
            os.path.join(entry, "sitecustomize", "__init__.py"),
        ):
            if os.path.isfile(candidate):
                runpy.run_path(candidate, run_name="_envguard_chained_sitecustomize")
                return


def _install() -> None:
    folder = os.environ.get(DIR_ENV)
    applying = bool(folder and os.environ.get("ENVGUARD_WATCH_APPLY"))  # imported while HERE is on the path
    apply = __import__("_envguard_apply").from_env() if applying else None
    sys.path[:] = [p for p in sys.path if not p or os.path.abspath(p) != HERE]
    if not folder or not os.path.isdir(folder):
        return  # envguard is not listening: do nothing at all
    state = _State(folder)
    state.apply = apply
    try:
        if TARGET in sys.modules:
            _patch(state, sys.modules[TARGET])
        else:
            sys.meta_path.insert(0, _Finder(state))
    except Exception as exc:
        state.fail("installing the import hook", exc)


def attach(folder: str) -> _State:
    """Time this process's DataLoaders into `folder` until `detach`: envguard's in-process watch (a notebook
    cell under %%envguard_watch), where `_install` is the watched job's."""
    state = _State(folder)
    state.at_exit = False
    if TARGET in sys.modules:
        _patch(state, sys.modules[TARGET])
    else:
        state.finder = _Finder(state)
        sys.meta_path.insert(0, state.finder)
    return state


def detach(state: _State) -> None:
    """Stop timing: the loaders' totals are flushed and torch's classes are as they were."""
    if state.finder is not None and state.finder in sys.meta_path:
        sys.meta_path.remove(state.finder)
    for owner, name, original in reversed(state.restore):
        setattr(owner, name, original)
    state.restore = []
    if state.loaders or state.fetches or state.error:
        state.flush(force=True)


if __name__ == "sitecustomize":  # the watched job's interpreter loaded it from PYTHONPATH
    _install()
    _chain()
