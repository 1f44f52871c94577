"""Worker start-up per start method: the seconds from `iter(loader)` to the first batch with the user's
dataset (or loader) under the start method in use, and under fork also under spawn, which is what the same
pipeline pays on macOS/Windows (and forkserver, Linux's default from Python 3.14, pays much the same).
A spawn/forkserver worker starts a fresh interpreter that imports torch and unpickles the dataset.
"""

from __future__ import annotations

import multiprocessing
from typing import Any, Dict, List

WORKERS = 2  # when the user's loader has none: start-up needs workers to mean anything


def _loader(settings: Dict[str, Any], method: str) -> Any:
    """The user's loader (or a plain one over --dataset) whose workers start by `method`."""
    from torch.utils.data import DataLoader

    context = multiprocessing.get_context(method)
    if settings.get("loader"):
        from .sweep import rebuild
        from .user_loader import factory

        given = factory(settings["loader"])()
        workers = given.num_workers or WORKERS
        return rebuild(given, {"num_workers": workers, "multiprocessing_context": context})
    from .datasets import load_user
    from .heartbeat import wrap

    dataset = wrap(load_user(settings["dataset"])(), settings.get("watch_dir"))
    return DataLoader(dataset, batch_size=1, num_workers=WORKERS, multiprocessing_context=context)


def methods(in_use: str, picklable: bool) -> List[str]:
    """In use first; under fork, spawn too when the dataset pickles (else it is known to fail)."""
    return [in_use] + (["spawn"] if in_use == "fork" and picklable else [])


def phase(settings: Dict[str, Any], result: Dict[str, Any]) -> Dict[str, Any]:
    """{"in_use": method, "workers": N, "seconds": {method: first-batch seconds}}."""
    from .timing import first_batch

    in_use = multiprocessing.get_start_method(allow_none=False)
    safety = result.get("start_method_safety") or {}
    record: Dict[str, Any] = {"in_use": in_use, "seconds": {}, "unpicklable": bool(safety.get("problems"))}
    given = (result.get("loader") or {}).get("first_batch_s")
    for method in methods(in_use, not safety.get("problems")):
        if method == in_use and given is not None:  # timed already: the first epoch of your loader's checks
            record["seconds"][method] = given
            record["workers"] = int(result["loader"]["settings"]["num_workers"])
            record["persistent_workers"] = bool(result["loader"]["settings"]["persistent_workers"])
            continue
        loader = _loader(settings, method)
        record["workers"] = int(loader.num_workers)
        record["persistent_workers"] = bool(loader.persistent_workers)
        record["seconds"][method] = first_batch(loader)
        del loader
    return record


def needs(settings: Dict[str, Any], result: Dict[str, Any], interpreter_s: float) -> float:
    """Seconds the phase needs: a fresh interpreter's start-up (torch's import) per spawn start, ~0 for
    fork or a start-up timed already."""
    in_use = multiprocessing.get_start_method(allow_none=False)
    timed = (result.get("loader") or {}).get("first_batch_s") is not None
    spawns = (0 if timed or in_use == "fork" else 1) + (1 if in_use == "fork" else 0)
    return 0.5 + 1.5 * interpreter_s * spawns
