"""Entry point in the target environment: read the JSON settings, run the phases inside the budget, and print
one line `ENVGUARD-SMOKE-JSON: {...}` with everything measured. Missing torch is reported, not raised.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import multiprocessing
import platform
import sys
import time
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

MARKER = "ENVGUARD-SMOKE-JSON: "
PROBE_MARKER = "ENVGUARD-PROBE-JSON: "


def _say(settings: Dict[str, Any], text: str) -> None:
    if settings.get("progress"):
        sys.stderr.write("envguard smoke: %s\n" % text)
        sys.stderr.flush()


def _error(result: Dict[str, Any], phase: str, exc: BaseException) -> None:
    from . import memory_limit

    memory_limit.note(exc)  # out of memory: the reserve given back for this report, no phase after it
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    result["errors"].append({"phase": phase, "error": last})


def _golden(probe_script: str) -> Dict[str, Any]:
    """The fingerprint probe's streams, computed here (same code as `envguard snapshot`)."""
    spec = importlib.util.spec_from_file_location("envguard_fingerprint_probe", probe_script)
    if spec is None or spec.loader is None:
        raise RuntimeError("cannot load the fingerprint probe from %s" % probe_script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        module.main()
    line = next(ln for ln in buffer.getvalue().splitlines() if ln.startswith(PROBE_MARKER))
    return json.loads(line[len(PROBE_MARKER) :])  # type: ignore[no-any-return]


def _datasets(settings: Dict[str, Any], result: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The sweep's datasets: name, kind, factory by size, nominal per-sample cost, collate."""
    from . import cold_folder
    from . import datasets as ds

    shape = tuple(settings["shape"])
    io_ms, cpu_ms = float(settings["io_ms"]), float(settings["cpu_ms"])
    out: List[Dict[str, Any]] = []
    if settings.get("synthetic", True):
        out.append(
            {"name": "io", "make": lambda n: ds.IOBound(n, io_ms, shape), "latency_ms": io_ms, "cpu_ms": 0.0}
        )
        out.append(
            {
                "name": "cpu",
                "make": lambda n: ds.CPUBound(n, cpu_ms, shape),
                "latency_ms": cpu_ms,
                "cpu_ms": cpu_ms,
            }
        )
    if settings.get("data_dir"):
        folder = cold_folder.folder(settings, result)  # read cold, decoded with --decode (issue 10)
        out.append({"name": "data", "make": folder.sized})
    if settings.get("dataset"):
        factory = ds.load_user(settings["dataset"])
        out.append({"name": "user", "make": lambda n: factory()})
    return out


def _throughput(settings: Dict[str, Any], result: Dict[str, Any], deadline: float, cuda: bool) -> None:
    from . import heartbeat, memory_limit, planner, timing

    specs = _datasets(settings, result)
    workers = sorted(set(settings["workers"]))
    essential = list(settings.get("essential_workers") or [min(workers), max(workers)])
    step_ms = settings.get("step_ms")
    entries = [_profiled(settings, spec) for spec in specs]
    result["throughput"] += [entry for entry, _ in entries]
    costs = [cost for _, cost in entries if cost]
    shares = planner.shares(
        [{"per_sample_s": s, "cpu_bound": bound} for s, bound in costs],
        workers,
        essential,
        batch_size=int(settings["batch_size"]),
        budget_s=deadline - time.perf_counter(),
        startup_s=0.1,
        cpus=int(settings.get("cpus") or 1),
        step_s=float(step_ms) / 1000.0 if step_ms else None,
    )
    for spec, (entry, cost) in [(spec, entries[i]) for i, spec in enumerate(specs)]:
        if cost is None or memory_limit.exhausted():
            continue
        # each dataset's share (as many worker counts each as fit), of the time actually left
        share = shares.pop(0)
        share *= (deadline - time.perf_counter()) / max(share + sum(shares), 1e-9)
        _say(settings, "throughput sweep: %s dataset, num_workers %s" % (spec["name"], workers))
        try:
            sweep = timing.Sweep(
                spec["make"],
                batch_size=int(settings["batch_size"]),
                per_sample_s=cost[0],
                cpu_bound=cost[1],
                cpus=int(settings.get("cpus") or 1),
                deadline=time.perf_counter() + share,
                collate=spec.get("collate"),
                watch_dir=settings.get("watch_dir"),
                step_ms=float(step_ms) if step_ms else None,
                on_row=lambda: heartbeat.partial(settings.get("watch_dir"), result),
            )
            entry["rows"] = sweep.rows  # filled row by row: a run stopped at the budget keeps them
            entry["rows"] = sweep.run(workers, essential, refine=bool(settings.get("refine")))
        except Exception as exc:  # a crash is a finding (bus error, unpicklable dataset...), not the end
            memory_limit.note(exc)
            entry["error"] = traceback.format_exception_only(type(exc), exc)[-1].strip()
        heartbeat.partial(settings.get("watch_dir"), result)


def _profiled(
    settings: Dict[str, Any], spec: Dict[str, Any]
) -> Tuple[Dict[str, Any], Optional[Tuple[float, bool]]]:
    """A dataset's entry and its (per-sample seconds, CPU-bound): nominal for the synthetic ones, else
    profiled in a worker; None when it cannot even be profiled (the entry carries the error)."""
    from . import datasets as ds
    from . import heartbeat, memory_limit, profiling

    entry: Dict[str, Any] = {
        "name": spec["name"],
        "nominal_latency_ms": spec.get("latency_ms"),
        "nominal_cpu_ms": spec.get("cpu_ms"),
    }
    try:
        probe = spec["make"](16)
        entry["length"] = ds.sized(probe)
        entry["iterable"] = ds.is_iterable(probe)
        if spec.get("latency_ms"):  # synthetic: its cost is known, no profile to pay for
            return entry, (spec["latency_ms"] / 1000.0, bool(spec["cpu_ms"] >= 0.5 * spec["latency_ms"]))
        heartbeat.phase(settings.get("watch_dir"), "profiling the %s dataset" % spec["name"])
        entry["profile"] = profiling.profile(heartbeat.wrap(probe, settings.get("watch_dir")))
    except Exception as exc:
        memory_limit.note(exc)
        entry["error"] = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return entry, None
    wall_ms = entry["profile"]["wall_ms"] or 1.0
    cpu_ms = entry["profile"]["cpu_ms"]
    return entry, (wall_ms / 1000.0, bool(cpu_ms and cpu_ms >= 0.5 * wall_ms))


def _determinism(settings: Dict[str, Any], result: Dict[str, Any], deadline: float) -> None:
    from . import datasets as ds
    from . import seeded_runs

    options = settings["determinism"]
    factory: Callable[[], Any]
    if settings.get("dataset"):
        factory, name = ds.load_user(settings["dataset"]), "user"
    else:
        size = int(options["limit"])
        factory, name = (lambda: ds.Augmented(size)), "augmented"
    _say(settings, "determinism: %s dataset" % name)
    record = seeded_runs.run_all(
        factory,
        int(options["max_workers"]),
        seed=int(options["seed"]),
        batch_size=int(options["batch_size"]),
        limit=int(options["limit"]),
        deadline=deadline,
        watch_dir=settings.get("watch_dir"),
    )
    record["dataset"] = name
    result["determinism"] = record


def _gpu_source(settings: Dict[str, Any]) -> Tuple[Callable[[int], Any], Optional[Callable[..., Any]], float]:
    """The dataset the GPU phase feeds: the user's (--dataset / --data) or the synthetic I/O-bound one; with
    its collate function and per-sample milliseconds (measured for the user's, nominal otherwise)."""
    from . import datasets as ds

    if settings.get("dataset"):
        factory = ds.load_user(settings["dataset"])
        return (lambda n: factory()), None, float(settings.get("user_sample_ms") or settings["io_ms"])
    if settings.get("data_dir"):
        folder = ds.Folder(settings["data_dir"])
        return (
            (lambda n: folder),
            ds.collate_ragged,
            float(settings.get("user_sample_ms") or settings["io_ms"]),
        )
    shape, io_ms = tuple(settings["shape"]), float(settings["io_ms"])
    return (lambda n: ds.IOBound(n, io_ms, shape)), None, io_ms


def _gpu(settings: Dict[str, Any], result: Dict[str, Any], device: str, deadline: float) -> None:
    """Round trip of a real batch of the dataset under test, bandwidth, and idle fraction (any device)."""
    from torch.utils.data import DataLoader

    from . import gpu_phase

    _say(settings, "GPU: host-to-device bandwidth and idle fraction")
    make, collate, per_sample_ms = _gpu_source(settings)
    batch_size = int(settings["batch_size"])
    sample = next(iter(DataLoader(make(2 * batch_size), batch_size=batch_size, collate_fn=collate)))
    gpu_settings = {
        "per_sample_ms": per_sample_ms,
        "batch_size": batch_size,
        "step_ms": settings.get("step_ms"),
        "max_workers": max(settings["workers"] or [0]),
        "copy_bytes": settings.get("copy_bytes"),
    }
    result["gpu"] = gpu_phase.run(device, sample, gpu_settings, deadline, make, collate)


def _environment(result: Dict[str, Any], settings: Dict[str, Any]) -> Optional[str]:
    """Versions and the device to use; None when CUDA was asked for and is missing."""
    import torch

    result["torch"] = str(torch.__version__)
    result["torch_cuda"] = getattr(torch.version, "cuda", None)
    result["cuda_available"] = bool(torch.cuda.is_available())
    result["start_method"] = multiprocessing.get_start_method(allow_none=False)
    try:
        import numpy

        result["numpy"] = str(numpy.__version__)
    except ImportError:
        result["numpy"] = None
    wanted = settings.get("device", "auto")
    if wanted == "cuda" and not result["cuda_available"]:
        result["error"] = "cuda-unavailable"
        return None
    return "cuda" if wanted in ("auto", "cuda") and result["cuda_available"] else "cpu"


def run(settings: Dict[str, Any], started: float) -> Dict[str, Any]:
    result: Dict[str, Any] = {
        "python": platform.python_version(),
        "executable": sys.executable,
        "errors": [],
        "throughput": [],
        "determinism": None,
        "gpu": None,
        "golden": None,
    }
    try:
        import torch  # noqa: F401
    except ImportError:
        result["error"] = "torch-missing"
        return result
    warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\.utils\.data")
    if settings.get("start_method"):  # --start-method: every DataLoader's workers start this way (issue 10)
        multiprocessing.set_start_method(settings["start_method"], force=True)
    device = _environment(result, settings)
    if device is None:
        return result
    from . import memory_limit

    # after the imports (torch, numpy) and CUDA's driver check, so what their libraries map (VmData 217 MiB
    # with the CPU wheel, 765 MiB with the CUDA one) is not taken from the dataset; every worker inherits it
    result["memory_limit"] = memory_limit.record(memory_limit.apply(settings.get("memory_limit")), peak=False)
    memory_limit.hand_down(settings.get("memory_limit"))
    from . import process_limit

    process_limit.apply()  # before any worker starts: each inherits it (RLIMIT_NPROC; see the module)
    result["device"] = device
    deadline = started + float(settings["budget_s"])
    cuda = device == "cuda"

    def golden() -> None:
        result["golden"] = _golden(settings["probe_script"])

    def record() -> None:  # --record / --compare (issue 10)
        from . import first_batches

        result["record"] = first_batches.observe(settings)

    phases: List[Tuple[str, Callable[[], None], bool]] = [
        ("golden", golden, bool(settings.get("probe_script"))),
        ("record", record, bool(settings.get("record"))),
        ("determinism", lambda: _determinism(settings, result, _share(deadline, 0.25, floor=3.0)), True),
        ("gpu", lambda: _gpu(settings, result, device or "cpu", _share(deadline, 0.3)), cuda),
        ("throughput", lambda: _throughput(settings, result, deadline, cuda), True),
    ]
    result["phase_seconds"] = {"start-up": round(time.perf_counter() - started, 3)}
    if settings.get("dataset") and not _dataset_imports(settings["dataset"], result):
        return result
    if settings.get("dataset") or settings.get("loader"):  # the user's pipeline first (issue 10)
        from . import user_pipeline

        # the fingerprints and --record's batches before it: --loader's profile may take the whole budget
        # on a busy machine, and what was asked to be recorded must not be what the budget cuts (issue 45)
        _run_phases(phases[:2], settings, result)
        phases = phases[2:]
        if user_pipeline.run(
            settings, result, _share(deadline, 1.0 if settings.get("loader") else 0.4, floor=3.0)
        ):
            phases = []
    if settings.get("watch_dir"):
        from . import heartbeat

        heartbeat.partial(settings["watch_dir"], result)
    _run_phases(phases, settings, result)
    result["elapsed_s"] = round(time.perf_counter() - started, 3)
    return result


def _run_phases(
    phases: List[Tuple[str, Callable[[], None], bool]], settings: Dict[str, Any], result: Dict[str, Any]
) -> None:
    """Run each wanted phase in order, its time and its error (if any) in `result`, the partial results
    written to the watch folder after each (a kill at the budget keeps them)."""
    from . import memory_limit

    for name, action, wanted in phases:
        if not wanted or memory_limit.exhausted():  # out of memory: every phase would meet the limit again
            continue
        began = time.perf_counter()
        if settings.get("watch_dir"):
            from . import heartbeat

            heartbeat.phase(settings["watch_dir"], "%s phase" % name)
        try:
            action()
        except Exception as exc:
            _error(result, name, exc)
        result["phase_seconds"][name] = round(time.perf_counter() - began, 3)
        if settings.get("watch_dir"):
            from . import heartbeat

            heartbeat.partial(settings["watch_dir"], result)


def _dataset_imports(spec: str, result: Dict[str, Any]) -> bool:
    """Import the --dataset module once, up front; when it cannot be (a SyntaxError, an exception at import,
    no such NAME) the one-line reason goes into `result` and no phase runs."""
    from . import datasets as ds

    try:
        ds.load_user(spec)
    except ValueError as exc:
        result["error"], result["message"] = "bad-dataset", str(exc)
        return False
    return True


def _share(deadline: float, fraction: float, floor: float = 0.0) -> float:
    """A phase's own deadline: `fraction` of the time left, but at least `floor` seconds (correctness
    first)."""
    now = time.perf_counter()
    return now + max(floor, max(0.0, deadline - now) * fraction)


def main(argv: List[str], started: Optional[float] = None) -> int:
    started = time.perf_counter() if started is None else started
    settings = json.loads(argv[0]) if argv else {}
    from . import memory_limit

    result = run(settings, started)
    if memory_limit.exhausted():  # reap the workers of the loader that ran out, so their peak is counted
        import gc

        gc.collect()
        multiprocessing.active_children()
    result["memory_limit"] = memory_limit.record((result.get("memory_limit") or {}).get("limit_bytes"))
    sys.stdout.write(MARKER + json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0
