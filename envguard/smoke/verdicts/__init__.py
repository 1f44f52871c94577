"""smoke's verdicts, one module per concern, each pure (measured records and the analysed sweep in, Findings
out): crashes, golden streams, the budget, determinism, the user's pipeline and loader, memory, storage,
throughput, the GPU and recordings. `judge` runs them all in the report's order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from envguard.findings import Finding
from envguard.machine.host import CpuInfo, ShmInfo
from envguard.model import Fingerprints
from envguard.pipeline import Threads, most_workers
from envguard.smoke.measured import Measured
from envguard.smoke.rates import below_loader_floor, swept
from envguard.smoke.readpasses import StorageResult
from envguard.smoke.recordfile import Recording
from envguard.smoke.report import DatasetResult, Recommendation, SmokeOptions, WorkerAdvice
from envguard.smoke.verdicts import (
    budget,
    crashes,
    determinism,
    golden,
    gpu,
    loader,
    memory,
    pipeline,
    recording,
    storage,
    throughput,
    workers,
)


@dataclass(frozen=True, slots=True)
class HostFacts:
    """What envguard read on the host for the verdicts: its CPUs, /dev/shm, the RAM available, and the first
    GPU's maximum PCIe link from its own NVML (read only when the GPU phase ran)."""

    cpus: CpuInfo
    shm: ShmInfo
    available: int | None
    nvml_link: gpu.Link = (None, None)


@dataclass(frozen=True, slots=True)
class Inputs:
    """Everything the verdicts judge: the module's records, the sweep analysed per dataset with each one's
    recommendation, and what came from elsewhere (the lock's fingerprints, the storage test, a recording)."""

    measured: Measured
    options: SmokeOptions
    datasets: Sequence[DatasetResult]
    recommendations: Mapping[str, Recommendation | None]
    host: HostFacts
    lock: Fingerprints | None = None
    stored: StorageResult | None = None
    recorded: Recording | None = None


def judge(given: Inputs) -> list[Finding]:
    """Every verdict, grouped by category in a stable order."""
    measured, options = given.measured, given.options
    found = crashes.phase_errors(measured.errors, measured.memory_use)
    errors = [e.error for e in measured.errors] + [d.error for d in given.datasets if d.error]
    if measured.crossproc is not None:
        errors += [run.error for run in measured.crossproc.runs.values() if run.error]
    found += crashes.out_of_memory(measured.memory_use, errors, given.host.available)
    if options.lock is not None and not any(e.phase == "golden" for e in measured.errors):
        found += golden.golden(measured.golden, given.lock, options.lock.name)
    found += budget.stopped(measured.stopped)
    if not pipeline.replaces_main_phases(
        measured
    ):  # --loader has its own checks; an unstartable dataset none
        found += determinism.findings(measured.determinism)
    found += _pipeline(measured)
    found += workers.model_advice(
        measured.loader_profile,
        measured.loader.settings if measured.loader else None,
        given.host.cpus.usable,
        measured.device == "cuda",
        options.step_ms,
        options.step_cores,
        options.step_threads,
    )
    found += _memory(given)  # issue 10: per-worker memory and /dev/shm for every local rank
    found += _throughput(given)
    settings = measured.loader.settings if measured.loader else None
    mine = options.num_workers
    if mine is None and settings is not None:  # --loader: your loader's own workers
        mine = settings.num_workers
    in_flight = memory.workers_in_flight(given.recommendations, mine)
    if not any(f.check == memory.SHM for f in found):  # your loader's batches in flight are judged already
        found.append(memory.shm(given.host.shm, given.datasets, in_flight))
    found += gpu.gpu(measured.gpu, given.host.nvml_link)
    if given.recorded is not None:
        found += recording.compare(given.recorded, measured.first_batches, measured.golden)
    return found


def worker_advice(measured: Measured, options: SmokeOptions, host: HostFacts) -> WorkerAdvice:
    """doctor --loader: the model's setting for the user's loader from its dataset's profile, the thread
    advice instead where the step's threads outnumber its cores, or the findings that say why there is none
    (the dataset raised, ran out of memory, or the budget ended)."""
    settings = measured.loader.settings if measured.loader else None
    errors = [e.error for e in measured.errors]
    found = crashes.phase_errors(measured.errors, measured.memory_use)
    found += crashes.out_of_memory(measured.memory_use, errors, host.available)
    found += budget.stopped(measured.stopped)
    found += pipeline.start_method(measured.start_method_safety)
    advised = workers.worker_model(
        measured.loader_profile,
        settings,
        host.cpus.usable,
        measured.device == "cuda",
        options.step_ms,
        options.step_cores,
        options.step_threads,
    )
    if advised is None:
        return WorkerAdvice(loader=str(options.loader), advice=None, findings=tuple(found))
    if isinstance(advised, Threads):  # the step's threads first, as in watch: no worker setting yet
        return WorkerAdvice(str(options.loader), None, (*found, advised.finding()), threads=advised)
    return WorkerAdvice(loader=str(options.loader), advice=advised[0], findings=(*found, advised[1]))


def _pipeline(measured: Measured) -> list[Finding]:
    """Start method, cross-process, the user's own loader (issue 10)."""
    checks = measured.loader
    return (
        pipeline.start_method(measured.start_method_safety)
        + pipeline.startup(measured.startup)
        + loader.own_loader(checks)
        + loader.identity(checks.identity if checks else None)
        + pipeline.cross_process(measured.crossproc)
        + budget.skipped_checks(measured.pipeline_skipped)
    )


def _memory(given: Inputs) -> list[Finding]:
    """Copy-on-read and /dev/shm for the user's workers (the loader's own settings under --loader)."""
    options, record = given.options, given.measured.memory
    settings = given.measured.loader.settings if given.measured.loader else None
    # the user's count (0 is a count: nothing crosses /dev/shm), else the loader's, else doctor's default
    workers = options.num_workers if options.num_workers is not None else None
    if workers is None and settings is not None and settings.num_workers is not None:
        workers = settings.num_workers
    if workers is None:
        workers = most_workers(given.host.cpus.usable)
    batch_size = (settings.batch_size if settings else None) or options.batch_size
    prefetch = (settings.prefetch_factor if settings else None) or 2
    ranks = options.local_ranks
    return memory.worker_memory(record, given.host.available, workers, ranks) + memory.shm_in_flight(
        record, given.host.shm, workers, ranks, batch_size, prefetch
    )


def _throughput(given: Inputs) -> list[Finding]:
    """The storage test's verdicts, then each dataset's sweep: your loader's configurations under --sweep,
    efficiency and your num_workers otherwise."""
    options, recs = given.options, given.recommendations
    data = next((d for d in given.datasets if d.name == "data"), None)
    found = storage.findings(
        given.stored, data, recs.get("data"), given.measured.decode_skipped, options.decode is not None
    )
    settings = given.measured.loader.settings if given.measured.loader else None
    for dataset in given.datasets:
        rec = recs.get(dataset.name)
        if swept(dataset.name):  # --sweep of the user's own loader (issue 10)
            found += loader.sweep(dataset, rec, settings)
            continue
        if dataset is data and below_loader_floor(dataset):  # a warm read of small files
            found.append(storage.floor_finding(dataset))
            continue
        found += throughput.efficiency(dataset, rec, given.host.cpus.usable)
        found += throughput.your_workers(dataset, rec, options.num_workers)
        found += throughput.still_scaling(dataset, rec)
    return found
