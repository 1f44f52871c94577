"""Start-method safety: pickle what spawn/forkserver workers receive (dataset, sampler, collate_fn,
worker_init_fn) with multiprocessing's ForkingPickler before any worker starts, and name the attribute that
fails.

Under fork nothing is pickled (workers inherit memory), so an unpicklable dataset works on Linux up to Python
3.13 and crashes at the first `iter(loader)` under spawn (macOS, Windows) and forkserver (Linux from Python
3.14).
"""

from __future__ import annotations

import functools
import inspect
import os
import types
from typing import Any, Dict, Iterator, List, Optional, Tuple

MAX_DEPTH = 6
MAX_ITEMS = 64  # items of a list/dict looked into when the container as a whole fails
# Types that hold an OS resource (a connection, a file, a lock): the fix is to open them in the worker.
HANDLE_MODULES = (
    "sqlite3",
    "socket",
    "ssl",
    "_io",
    "io",
    "_thread",
    "threading",
    "select",
    "mmap",
    "h5py",
    "lmdb",
    "psycopg2",
    "pymongo",
    "redis",
    "zmq",
    "_sqlite3",
    "_socket",
    "_ssl",
)
HANDLE_WORDS = ("Connection", "Cursor", "Lock", "File", "Socket", "Environment", "Session", "Client")


class _Sink:
    """Discards the pickle stream: a dataset holding gigabytes is checked without a second copy in memory."""

    def write(self, data: Any) -> int:
        return len(data)


def _discard(buffer: Any) -> None:
    return None


def _dumps(obj: Any) -> Optional[BaseException]:
    from multiprocessing.reduction import ForkingPickler

    try:  # protocol 5 hands large buffers (numpy arrays, tensors' storage) out of band: not copied either
        ForkingPickler(_Sink(), 5, True, _discard).dump(obj)
    except Exception as exc:  # PicklingError, TypeError ("cannot pickle ..."), AttributeError (local objects)
        return exc
    return None


def _children(obj: Any, path: str) -> Iterator[Tuple[str, Any]]:
    """(path, value) of what pickling `obj` pickles in turn: attributes, items, a partial's parts."""
    if isinstance(obj, functools.partial):
        yield path + ".func", obj.func
        for i, arg in enumerate(obj.args):
            yield "%s.args[%d]" % (path, i), arg
        for key, arg in (obj.keywords or {}).items():
            yield "%s.keywords[%r]" % (path, key), arg
        return
    if isinstance(obj, types.MethodType):
        yield path + ".__self__", obj.__self__
        return
    if isinstance(obj, dict):
        for n, (key, value) in enumerate(obj.items()):
            if n >= MAX_ITEMS:
                return
            yield "%s[%r]" % (path, key), value
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for n, value in enumerate(obj):
            if n >= MAX_ITEMS:
                return
            yield "%s[%d]" % (path, n), value
        return
    if isinstance(obj, (type, types.ModuleType, types.FunctionType)):
        return
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        for key, value in state.items():
            yield "%s.%s" % (path, key), value
    for key in getattr(type(obj), "__slots__", ()) or ():
        if isinstance(key, str) and hasattr(obj, key):
            yield "%s.%s" % (path, key), getattr(obj, key)


def _where(func: Any) -> str:
    try:
        file = inspect.getsourcefile(func) or ""
        line = inspect.getsourcelines(func)[1]
    except (OSError, TypeError):
        return ""
    return " defined at %s:%d" % (os.path.basename(file), line)


def describe(obj: Any, path: str) -> Dict[str, Any]:
    """What the culprit is and the fix for its kind."""
    kind_type = type(obj)
    type_name = "%s.%s" % (kind_type.__module__, kind_type.__qualname__)
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        qualname = getattr(obj, "__qualname__", "?")
        name = path + (".<lambda>" if qualname.endswith("<lambda>") else " (%s)" % qualname)
        what = "a lambda" if "<lambda>" in qualname else "a nested function"
        return {
            "name": name + _where(obj),
            "kind": "function",
            "type": type_name,
            "fix": "%s cannot be pickled for spawn/forkserver workers: define `%s` as a module-level "
            "function "
            "(def) or a callable class, or use functools.partial of a module-level function"
            % (what, path.rsplit(".", 1)[-1]),
        }
    module = kind_type.__module__.split(".")[0]
    if module in HANDLE_MODULES or any(word in kind_type.__name__ for word in HANDLE_WORDS):
        short = type_name[1:] if type_name.startswith("_") else type_name
        return {
            "name": "%s (%s)" % (path, short),
            "kind": "handle",
            "type": type_name,
            "fix": "an open %s belongs to one process: set `%s = None` in __init__ and open it on first use "
            "in "
            "__getitem__ (each worker opens its own), or open it in worker_init_fn via "
            "torch.utils.data.get_worker_info().dataset" % (kind_type.__name__, path.split(".", 1)[-1]),
        }
    if "<locals>" in kind_type.__qualname__:
        return {
            "name": "%s (%s, a class defined inside a function)" % (path, kind_type.__qualname__),
            "kind": "local-class",
            "type": type_name,
            "fix": "define %s at module level: spawn/forkserver workers import classes by name"
            % kind_type.__name__,
        }
    if isinstance(obj, types.GeneratorType):
        return {
            "name": "%s (a generator)" % path,
            "kind": "generator",
            "type": type_name,
            "fix": "store the data, not a generator: create the iterator in __iter__ or __getitem__",
        }
    return {
        "name": "%s (%s)" % (path, type_name),
        "kind": "object",
        "type": type_name,
        "fix": "give %s a __getstate__/__setstate__ that drops and rebuilds its unpicklable part, or create "
        "it "
        "inside the worker (worker_init_fn or on first use)" % path,
    }


def culprit(obj: Any, path: str, depth: int = 0) -> Optional[Dict[str, Any]]:
    """The deepest attribute of `obj` that fails to pickle (None when `obj` pickles)."""
    error = _dumps(obj)
    if error is None:
        return None
    if depth < MAX_DEPTH:
        for child_path, child in _children(obj, path):
            found = culprit(child, child_path, depth + 1)
            if found is not None:
                return found
    found = describe(obj, path)
    found["error"] = ("%s: %s" % (type(error).__name__, error)).splitlines()[0][:200]
    return found


def parts_of(loader: Any) -> List[Tuple[str, Any]]:
    """What a DataLoader sends to each spawn/forkserver worker. The sampler is not among them: it runs in the
    main process only, so an unpicklable sampler never stops a worker from starting."""
    return [
        ("dataset", loader.dataset),
        ("collate_fn", getattr(loader, "collate_fn", None)),
        ("worker_init_fn", getattr(loader, "worker_init_fn", None)),
    ]


def check(parts: List[Tuple[str, Any]]) -> Dict[str, Any]:
    """{"problems": [...], "checked": [names]}: one problem per part that does not pickle."""
    problems: List[Dict[str, Any]] = []
    checked: List[str] = []
    for name, obj in parts:
        if obj is None:
            continue
        checked.append(name)
        found = culprit(obj, name)
        if found is not None:
            problems.append(found)
    return {"problems": problems, "checked": checked}


def method_of(loader: Any) -> str:
    """The start method the loader's workers use: its multiprocessing_context, else the process default."""
    import multiprocessing

    context = getattr(loader, "multiprocessing_context", None) if loader is not None else None
    if context is not None:
        return str(context.get_start_method())
    return str(multiprocessing.get_start_method(allow_none=False))


def phase(settings: Dict[str, Any], result: Dict[str, Any]) -> bool:
    """Check the user's dataset or loader; record it as result["start_method_safety"]. True when workers
    cannot start under the start method in use (the dataset phases would only crash)."""
    loader: Any = None
    if settings.get("loader"):
        from .user_loader import factory

        loader = factory(settings["loader"])()
        parts = parts_of(loader)
    else:
        from .datasets import load_user

        parts = [("dataset", load_user(settings["dataset"])())]
    record = check(parts)
    record["method"] = method_of(loader)
    result["start_method_safety"] = record
    return bool(record["problems"]) and record["method"] != "fork"
