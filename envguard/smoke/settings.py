"""What the in-environment module is asked to measure: the worker counts to sweep and the JSON settings it
reads (the one message envguard sends it; `measured.decode` reads the one it sends back)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from envguard.errors import BadInputError, UsageError
from envguard.machine import host
from envguard.pipeline import most_workers
from envguard.smoke.readpasses import StorageResult
from envguard.smoke.recordfile import Recording, replay
from envguard.smoke.report import SmokeOptions

SHAPE = (3, 224, 224)
DETERMINISM = {"batch_size": 8, "limit": 64}
GIB = 1 << 30
DEFAULT_SHARE = 0.75  # of the memory available: the default --memory-limit of each process of the run
DEFAULT_FLOOR = 2 * GIB  # never below: the module and torch alone take ~0.3 GiB, a worker more


def memory_limit(options: SmokeOptions, memory: host.MemoryInfo) -> int | None:
    """The limit each process of the run gets, in bytes (None: no limit): see `per_process_limit`."""
    return per_process_limit(options.memory_limit, memory)


def per_process_limit(asked: int | None, memory: host.MemoryInfo) -> int | None:
    """The limit each process of a run gets, in bytes (None: no limit): --memory-limit (`asked`; 0: none),
    or three quarters of the memory available (the smaller of MemAvailable and the cgroup's limit), at least
    2 GiB; none where neither is known. `smoke --distributed` gives each rank the same."""
    if asked is not None:
        return asked or None  # 0: --memory-limit none
    known = [size for size in (memory.available, memory.cgroup_limit) if size]
    if not known:
        return None
    return max(DEFAULT_FLOOR, int(min(known) * DEFAULT_SHARE))


def worker_counts(options: SmokeOptions, cpus: host.CpuInfo) -> list[int]:
    """--workers, or 0, the powers of two up to the usable CPUs, the usable CPUs and the doctor's
    recommendation; plus the user's own num_workers."""
    if options.workers is not None:
        counts = set(options.workers)
    else:
        counts = {0, cpus.usable, most_workers(cpus.usable)}
        counts.update(2**k for k in range(cpus.usable.bit_length()) if 2**k <= cpus.usable)
    if options.num_workers is not None:
        counts.add(options.num_workers)
    return sorted(counts)


def recording(options: SmokeOptions) -> bool:
    """--record or --compare: the module reads the first batches too."""
    return options.record is not None or options.compare is not None


def settings(
    options: SmokeOptions,
    workers: list[int],
    budget_s: float,
    probe: Path | None,
    cpus_usable: int = 1,
    stored: StorageResult | None = None,
    recorded: Recording | None = None,
    memory_limit: int | None = None,
) -> dict[str, Any]:
    """The JSON the in-environment module reads."""
    synthetic = options.data_dir is None and options.dataset is None and options.loader is None
    first_batches = replay(options.seed, options.batch_size, recorded)
    return {
        "budget_s": budget_s,
        "device": options.device,
        "workers": workers,
        "batch_size": options.batch_size,
        "io_ms": options.io_ms,
        "cpu_ms": options.cpu_ms,
        "shape": list(SHAPE),
        "synthetic": synthetic,
        "data_dir": str(options.data_dir) if options.data_dir else None,
        "dataset": _dataset_spec(options.dataset),
        "probe_script": str(probe) if probe else None,
        "determinism": dict(DETERMINISM, seed=options.seed, max_workers=min(2, max(workers))),
        "essential_workers": sorted(
            {min(workers), max(workers), *([options.num_workers] if options.num_workers is not None else [])}
        ),
        "progress": False,  # the module's own stderr lines: envguard's bar shows its phase instead
        "cpus": cpus_usable,
        "step_ms": options.step_ms,
        "refine": options.workers is None,
        **pipeline_settings(options),
        # --data: read cold like the storage test, decode or not
        "data_cold": bool(stored and stored.method != "none"),
        "decode": options.decode,
        "record": dataclasses.asdict(first_batches) if recording(options) else None,
        "memory_limit": memory_limit,  # bytes per process, set by the module on itself (workers inherit it)
    }


def pipeline_settings(options: SmokeOptions) -> dict[str, Any]:
    """The user's own loader, the start method, and the cross-process and memory runs for a user pipeline."""
    user = options.dataset is not None or options.loader is not None
    checks = user and not options.advice_only  # doctor --loader: the profile for the model's advice alone
    return {
        "loader": _dataset_spec(options.loader, "--loader") if options.loader else None,
        "start_method": options.start_method,
        "crossproc": {"seed": options.seed, "limit": 32} if checks else None,
        "memory": (
            {"workers": 2, "indices": 16384, "batch_size": 256, "seed": options.seed} if checks else None
        ),
        "sweep": list(options.sweep) if options.sweep else None,
        "startup": checks,
        "advice_only": options.advice_only,
    }


def _dataset_spec(spec: str | None, option: str = "--dataset") -> str | None:
    """An absolute `FILE.py:NAME` (the module runs in another working directory's terms)."""
    if spec is None:
        return None
    path, sep, name = spec.rpartition(":")
    what = (
        "a Dataset class or a function returning one"
        if option == "--dataset"
        else "a function returning a DataLoader or (dataset, loader_kwargs)"
    )
    if not sep or not path.endswith(".py") or not name:
        raise UsageError(f"{option} {spec}: expected path/to/module.py:NAME ({what})")
    file = Path(path).expanduser()
    if not file.is_file():
        raise BadInputError(f"{option} {path}: no such file")
    return f"{file.resolve()}:{name}"
