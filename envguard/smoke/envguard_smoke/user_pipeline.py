"""The pipeline phases for --dataset/--loader (issue 10): start-method safety first, then the user's own
loader (--loader) and the cross-process run. Kept apart from main.py's phases; main calls `run` once."""

from __future__ import annotations

import time
from typing import Any, Dict

MEMORY_S = 2.0  # the per-worker memory run's own limit (it stops reading there)


def run(settings: Dict[str, Any], result: Dict[str, Any], deadline: float) -> bool:
    """Record each phase in `result`; True when main's own phases must not run (a --loader, whose checks are
    all here, or workers that cannot start under the start method in use)."""
    from . import memory_limit, pickling, user_loader

    user_loader.WATCH["dir"] = settings.get("watch_dir")
    try:
        blocked = pickling.phase(settings, result)
        _done(settings, result)
        if settings.get("loader") and not blocked and settings.get("advice_only"):
            given = user_loader.settings_of(user_loader.factory(settings["loader"])())
            result["loader"] = {"settings": given, "limit": 0}  # no runs: doctor judges no order
        elif settings.get("loader") and not blocked:
            result["loader"] = user_loader.checks(settings, deadline)
            _done(settings, result)
    except user_loader.LoaderError as exc:
        result["error"], result["message"] = "bad-loader", str(exc)
        return True
    except Exception as exc:  # the user's dataset raised: a finding, as in main's phases
        _record_error(result, "start-method safety", exc)
        return True
    if settings.get("loader") and settings.get("sweep") and not blocked:
        _sweep(settings, result, deadline)
    elif settings.get("loader") and not blocked:  # worker advice from the model needs the per-sample cost
        _profile(settings, result, deadline)
    # a fresh interpreter costs about what this one took to start (torch's import); two run side by side
    startup = float((result.get("phase_seconds") or {}).get("start-up") or 1.0)
    from .startup import needs as startup_needs

    wanted = [("memory", MEMORY_S + 1.0), ("cross-process", 2.0 * startup)]
    first = ("start-up", startup_needs(settings, result, startup))
    wanted.insert(0 if settings.get("start_method") else 2, first)  # --start-method: start-up first
    keys = {"memory": "memory", "cross-process": "crossproc", "start-up": "startup"}
    for name, needs in wanted:
        if blocked or not settings.get(keys[name]) or memory_limit.exhausted():  # out of memory: no more
            continue
        try:
            _phase(settings, "%s check" % name)
            _optional(name, needs, settings, result, deadline)
        except Exception as exc:  # the user's dataset raised: a finding, as in main's phases
            _record_error(result, name, exc)
        _done(settings, result)
    return blocked or bool(settings.get("loader"))


def _phase(settings: Dict[str, Any], text: str) -> None:
    """What the pipeline is doing now, named by --loader FILE.py:NAME when there is one."""
    from . import heartbeat, user_loader

    if settings.get("loader"):
        user_loader.watch_phase(text)
    else:
        heartbeat.phase(settings.get("watch_dir"), "%s of your dataset" % text)


def _done(settings: Dict[str, Any], result: Dict[str, Any]) -> None:
    """The results so far, for envguard to judge if it has to stop the run at the budget."""
    from . import heartbeat

    _phase(settings, "between checks")
    heartbeat.partial(settings.get("watch_dir"), result)


def _dataset(settings: Dict[str, Any]) -> Any:
    """A fresh copy of the user's dataset (--dataset, or the dataset of --loader's DataLoader)."""
    if settings.get("loader"):
        from .user_loader import factory

        return factory(settings["loader"])().dataset
    from .datasets import load_user

    return load_user(settings["dataset"])()


def _optional(
    name: str, needs: float, settings: Dict[str, Any], result: Dict[str, Any], deadline: float
) -> None:
    """Run the memory or cross-process check when the time left allows it, else record it as skipped."""
    from . import crossproc, memory_limit, worker_memory

    if deadline - time.perf_counter() < needs:
        left = round(max(0.0, deadline - time.perf_counter()), 1)
        result.setdefault("pipeline_skipped", []).append(
            {"phase": name, "needs_s": round(needs, 1), "left_s": left}
        )
    elif name == "memory" and result["start_method_safety"]["method"] == "fork":  # copy-on-write: fork only
        result["memory"] = (
            worker_memory.phase(settings, _dataset(settings), time.perf_counter() + MEMORY_S) or None
        )
    elif name == "cross-process":
        result["crossproc"] = crossproc.run(settings, deadline)
        for run in result["crossproc"]["runs"].values():  # a fresh interpreter ran out: the module would too
            if memory_limit.oom_text(run.get("error") or ""):
                memory_limit.note(MemoryError(run["error"]))
    elif name == "start-up":  # worker start-up per start method (issue 10, item 2)
        from . import startup

        result["startup"] = startup.phase(settings, result)


def _record_error(result: Dict[str, Any], phase: str, exc: BaseException) -> None:
    import traceback

    from . import memory_limit

    memory_limit.note(exc)  # out of memory: the reserve given back for this report, no check after it

    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    result["errors"].append({"phase": phase, "error": last})


def _sweep(settings: Dict[str, Any], result: Dict[str, Any], deadline: float) -> None:
    """--sweep: the user's loader timed per configuration, in half the time left (the rest for memory and
    the cross-process run)."""
    from . import sweep

    _phase(settings, "sweep")
    try:
        half = time.perf_counter() + 0.5 * max(0.0, deadline - time.perf_counter())
        result["throughput"].extend(sweep.run(settings, half))
    except Exception as exc:  # the user's dataset raised: a finding, as in main's phases
        _record_error(result, "sweep of your loader", exc)
    _done(settings, result)


def _profile(settings: Dict[str, Any], result: Dict[str, Any], deadline: float) -> None:
    """--loader without --sweep: the per-sample cost of the loader's dataset, read in one worker (CPU clocks
    and the off-CPU wait), from which envguard's model advises the workers."""
    from . import profiling

    _phase(settings, "profiling your dataset")
    try:
        left = max(0.0, deadline - time.perf_counter())
        result["loader_profile"] = profiling.profile(
            _dataset(settings), max_seconds=min(1.5, 0.15 * left), machine_seconds=min(1.0, 0.1 * left)
        )
    except Exception as exc:  # the user's dataset raised: a finding, as in main's phases
        _record_error(result, "profile of your dataset", exc)
    _done(settings, result)
