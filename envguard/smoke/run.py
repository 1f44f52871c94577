"""`run_smoke(options) -> SmokeReport`: plan, run the in-environment module, analyse, judge."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from envguard.errors import BadInputError, UsageError
from envguard.findings import Finding
from envguard.machine import host
from envguard.model import Fingerprints
from envguard.smoke import (
    determinism,
    gpu_verdicts,
    loader_verdicts,
    memory_verdicts,
    pipeline,
    record,
    runner,
    storage,
    storage_verdicts,
    throughput,
    verdicts,
)
from envguard.smoke.report import DatasetResult, Recommendation, SmokeOptions, SmokeReport, options_dict

SHAPE = (3, 224, 224)
SETTLE_S = 1.5  # kept back from the budget: a late last row, the module's exit (os._exit), parsing, rendering
KILL_GRACE_S = 1.0  # past the --budget before the module is killed: the whole command ends by budget + ~1.5 s
DETERMINISM = {"batch_size": 8, "limit": 64}


def worker_counts(options: SmokeOptions, cpus: host.CpuInfo) -> list[int]:
    """--workers, or 0, the powers of two up to the usable CPUs, the usable CPUs and the doctor's
    recommendation; plus the user's own num_workers."""
    if options.workers is not None:
        counts = set(options.workers)
    else:
        counts = {0, cpus.usable, host.recommended_workers(cpus)}
        counts.update(2**k for k in range(cpus.usable.bit_length()) if 2**k <= cpus.usable)
    if options.num_workers is not None:
        counts.add(options.num_workers)
    return sorted(counts)


def settings(
    options: SmokeOptions,
    workers: list[int],
    budget_s: float,
    probe: Path | None,
    cpus_usable: int = 1,
    stored: storage.StorageResult | None = None,
    recorded: record.Recording | None = None,
) -> dict[str, Any]:
    """The JSON the in-environment module reads."""
    synthetic = options.data_dir is None and options.dataset is None and options.loader is None
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
        **storage.settings(stored, options.decode),
        "record": record.run_settings(options.seed, options.batch_size, recorded)
        if _recording(options)
        else None,
    }


def _recording(options: SmokeOptions) -> bool:
    return options.record is not None or options.compare is not None


def pipeline_settings(options: SmokeOptions) -> dict[str, Any]:
    """The user's own loader, the start method, and the cross-process and memory runs for a user pipeline."""
    user = options.dataset is not None or options.loader is not None
    return {
        "loader": _dataset_spec(options.loader, "--loader") if options.loader else None,
        "start_method": options.start_method,
        "crossproc": {"seed": options.seed, "limit": 32} if user else None,
        "memory": {"workers": 2, "indices": 16384, "batch_size": 256, "seed": options.seed} if user else None,
        "sweep": list(options.sweep) if options.sweep else None,
        "startup": user,
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


def _environment(source: str | None) -> tuple[str, Path]:
    """(label, interpreter) for SOURCE: a prefix or name:ENV, never a file."""
    from envguard.prefix.probe import interpreter
    from envguard.sources import resolve_prefix

    if source and not source.startswith("name:") and Path(source).expanduser().is_file():
        raise UsageError(
            f"{source}: smoke needs a live environment (a prefix or name:ENV); "
            "to compare its streams with a lock use --lock FILE"
        )
    prefix = resolve_prefix(source)
    if not prefix.is_dir():
        raise BadInputError(f"{prefix}: no such environment folder; give a prefix path or name:ENV")
    try:
        return str(prefix), interpreter(prefix)
    except BadInputError as exc:
        raise BadInputError(
            f"{prefix}: no Python interpreter in this environment; smoke runs the DataLoader there, "
            "so it needs python and torch installed"
        ) from exc


def _lock_fingerprints(lock: Path | None) -> tuple[Fingerprints | None, Path | None]:
    if lock is None:
        return None, None
    from envguard.formats import read_file
    from envguard.prefix.probe import PROBE_SCRIPT

    return read_file(lock).fingerprints, PROBE_SCRIPT


def run_smoke(options: SmokeOptions, progress: bool = False) -> SmokeReport:
    """Run the whole smoke test and judge it; `progress`: a bar on stderr while the module runs."""
    started = time.perf_counter()
    recorded = record.load(options.compare) if options.compare is not None else None
    label, python = _environment(options.source)
    fingerprints, probe = _lock_fingerprints(options.lock)
    if probe is None and _recording(options):  # the recording carries the fingerprints
        from envguard.prefix.probe import PROBE_SCRIPT

        probe = PROBE_SCRIPT
    cpus = host.cpu_info()
    workers = worker_counts(options, cpus)
    stored = storage.measure(options.data_dir, options.budget_s) if options.data_dir else None
    left = options.budget_s - (time.perf_counter() - started)
    budget = max(1.0, left - SETTLE_S)
    # the module plans for `budget`; at the --budget itself it is stopped, workers and all (a hang, a slow
    # import)
    raw = runner.run_target(
        python,
        settings(options, workers, budget, probe, cpus.usable, stored, recorded),
        timeout=left + KILL_GRACE_S,
        progress=progress,
    )
    runner.check_started(raw, label, options.device)
    cuda = raw.get("device") == "cuda"
    datasets = tuple(
        throughput.summarize(loader_verdicts.claimable(entry), cpus.physical)  # issue 10: --sweep's ideal
        for entry in raw.get("throughput") or ()
    )
    recs = {
        d.name: throughput.recommend(d, cuda=cuda, pin_measured=_pin_helps(raw.get("gpu"))) for d in datasets
    }
    found = judge(raw, options, datasets, recs, fingerprints, cpus, stored)
    found += record.compare(recorded, raw) if recorded is not None else []
    recording = _write_recording(options, raw, recorded)
    return SmokeReport(
        environment=label,
        python=str(raw.get("python")),
        torch=raw.get("torch"),
        numpy=raw.get("numpy"),
        device=str(raw.get("device")),
        start_method=str(raw.get("start_method")),
        cpus=cpus,
        shm=host.shm_info(),
        datasets=datasets,
        recommendations=tuple(r for r in recs.values() if r is not None),
        determinism=_determinism_summary(raw.get("determinism")),
        gpu=raw.get("gpu"),
        findings=tuple(found),
        budget_s=options.budget_s,
        elapsed_s=round(time.perf_counter() - started, 2),
        options=options_dict(options),
        phase_seconds=dict(raw.get("phase_seconds") or {}),
        pipeline=pipeline.summary(raw),
        storage=_storage_summary(stored, raw),
        recording=recording,
    )


def judge(
    raw: dict[str, Any],
    options: SmokeOptions,
    datasets: tuple[DatasetResult, ...],
    recs: dict[str, Recommendation | None],
    lock: Fingerprints | None,
    cpus: host.CpuInfo,
    stored: storage.StorageResult | None = None,
) -> list[Finding]:
    """Every verdict, grouped by category in a stable order."""
    found: list[Finding] = [
        verdicts.crash(f"{e['phase']} phase", e["error"]) for e in raw.get("errors") or ()
    ]
    if options.lock is not None and not any(e["phase"] == "golden" for e in raw.get("errors") or ()):
        found += verdicts.golden(raw.get("golden"), lock, options.lock.name)
    if raw.get("stopped"):
        stop = raw["stopped"]
        found.append(
            Finding(
                "budget",
                "finished within --budget",
                "WARN",
                f"stopped at the budget during {stop.get('phase') or 'start-up'} after "
                f"{stop.get('after_s')} s (a slow or busy machine); the verdicts below use what was "
                "measured by then",
                "give a larger --budget, fewer --workers, or rerun on an idle machine",
            )
        )
    if not pipeline.replaces_main_phases(raw):  # --loader has its own checks; an unstartable dataset none
        found += determinism.findings(raw.get("determinism"))
    found += pipeline.findings(raw)  # start method, cross-process, the user's own loader
    found += _memory(raw, options, cpus)  # issue 10: per-worker memory and /dev/shm for every local rank
    data = next((d for d in datasets if d.name == "data"), None)
    found += storage_verdicts.findings(
        stored, data, recs.get("data"), raw.get("decode_skipped"), options.decode is not None
    )
    for dataset in datasets:
        rec = recs.get(dataset.name)
        if dataset.name.startswith(loader_verdicts.SWEPT):  # --sweep of the user's own loader (issue 10)
            found += loader_verdicts.sweep(dataset, rec, (raw.get("loader") or {}).get("settings") or {})
            continue
        if dataset is data and storage_verdicts.below_loader_floor(dataset):  # a warm read of small files
            found.append(storage_verdicts.floor_finding(dataset))
            continue
        found += verdicts.efficiency(dataset, rec, cpus.usable)
        found += verdicts.your_workers(dataset, rec, options.num_workers)
        found += verdicts.still_scaling(dataset, rec)
    in_flight = max([r.workers for r in recs.values() if r] + [options.num_workers or 0])
    found.append(verdicts.shm(host.shm_info(), datasets, in_flight))
    if raw.get("gpu"):
        found += gpu_verdicts.gpu(raw.get("gpu"), _nvml_max_link())
    return found


def _memory(raw: dict[str, Any], options: SmokeOptions, cpus: host.CpuInfo) -> list[Finding]:
    """Copy-on-read and /dev/shm for the user's workers (the loader's own settings under --loader)."""
    given = (raw.get("loader") or {}).get("settings") or {}
    workers = options.num_workers or given.get("num_workers") or host.recommended_workers(cpus)
    ranks = options.local_ranks
    record = raw.get("memory")
    return memory_verdicts.worker_memory(
        record, host.memory_info().available, workers, ranks
    ) + memory_verdicts.shm_in_flight(
        record,
        host.shm_info(),
        workers,
        ranks,
        int(given.get("batch_size") or options.batch_size),
        int(given.get("prefetch_factor") or 2),
    )


def _pin_helps(gpu: dict[str, Any] | None) -> bool | None:
    """Whether pinned copies beat pageable ones by 20% in the GPU phase (None when not measured on CUDA)."""
    h2d = (gpu or {}).get("h2d") or {}
    pinned, pageable = h2d.get("pinned_gbps"), h2d.get("pageable_gbps")
    if not pinned or not pageable:
        return None
    return bool(pinned >= 1.2 * pageable)


def _nvml_max_link() -> tuple[int | None, int | None]:
    """The first GPU's maximum PCIe link from envguard's own NVML, when the environment had none."""
    from envguard.machine.gpu import read_nvml

    report = read_nvml()
    if not report.gpus:
        return None, None
    return report.gpus[0].pcie_max_gen, report.gpus[0].pcie_max_width


def _determinism_summary(record: dict[str, Any] | None) -> dict[str, Any]:
    """Digests per run for the JSON output (the per-sample records stay inside the analysis)."""
    if not record:
        return {}
    runs = {
        name: {
            "workers": run["workers"],
            "persistent_workers": run["persistent"],
            "order_sha256": run["order_digests"],
            "stream_sha256": run["stream_digests"],
            "seconds": run["seconds"],
        }
        for name, run in sorted((record.get("runs") or {}).items())
    }
    return {
        "dataset": record.get("dataset"),
        "seed": record.get("seed"),
        "samples": record.get("limit"),
        "batch_size": record.get("batch_size"),
        "runs": runs,
        "skipped": record.get("skipped") or [],
    }


def _storage_summary(stored: storage.StorageResult | None, raw: dict[str, Any]) -> dict[str, Any]:
    """The storage test for the JSON output, MB/s and files/s next to each pass."""
    if stored is None:
        return {}
    import dataclasses

    data = dataclasses.asdict(stored)
    data["dropped"] = stored.dropped
    data["passes"] = [
        dict(dataclasses.asdict(p), mb_per_s=round(p.mb_per_s, 2), files_per_s=round(p.files_per_s, 1))
        for p in stored.passes
    ]
    data["decode_skipped"] = raw.get("decode_skipped")
    return data


def _write_recording(
    options: SmokeOptions, raw: dict[str, Any], recorded: record.Recording | None
) -> dict[str, Any]:
    """--record: write the file atomically; the JSON says what was written and what was compared."""
    out: dict[str, Any] = {}
    samples = len((raw.get("record") or {}).get("samples") or ())
    if recorded is not None:
        out["compared"] = {"path": str(recorded.path), "samples": len(recorded.samples), "now": samples}
    if options.record is not None and samples:
        which = f" --loader {options.loader}" if options.loader else ""
        which = f" --dataset {options.dataset}" if options.dataset else which
        reproduce = f"envguard smoke ENV{which} --compare {options.record.name}"
        run = record.run_settings(options.seed, options.batch_size, recorded)
        out["written"] = {"path": str(record.write(options.record, raw, run, reproduce)), "samples": samples}
    return out
