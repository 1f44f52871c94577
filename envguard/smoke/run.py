"""`run_smoke(options) -> SmokeReport`: one pipeline. Plan the run (settings), measure (the storage test on
the host, the in-environment module under the target's interpreter, decoded once into records),
analyse (rates), judge (verdicts), and collect the report; render.py shows it."""

from __future__ import annotations

import os
import time
from pathlib import Path

from envguard.errors import BadInputError, NoPlatformEntry, UsageError
from envguard.formats import read_file
from envguard.machine import host
from envguard.machine.gpu import read_nvml
from envguard.model import Fingerprints
from envguard.prefix.probe import PROBE_SCRIPT, interpreter
from envguard.smoke import advice, rates, readpasses, recordfile, runner, settings, verdicts
from envguard.smoke.measured import Measured
from envguard.smoke.report import (
    PipelineRecords,
    RecordingCompared,
    RecordingOutcome,
    RecordingWritten,
    SmokeOptions,
    SmokeReport,
    WorkerAdvice,
)
from envguard.sources import resolve_prefix

SETTLE_S = 1.5  # kept back from the budget: a late last row, the module's exit (os._exit), parsing, rendering
KILL_GRACE_S = 1.0  # past the --budget before the module is killed: the whole command ends by budget + ~1.5 s


def _environment(source: str | None) -> tuple[str, Path]:
    """(label, interpreter) for SOURCE: a prefix or name:ENV, never a file."""
    if source and not source.startswith("name:") and os.path.isfile(os.path.expanduser(source)):
        raise UsageError(
            f"{source}: smoke needs a live environment (a prefix or name:ENV); "
            "to compare its streams with a lock use --lock FILE"
        )
    prefix = resolve_prefix(source)
    if not os.path.isdir(prefix):  # os.path: a name too long for the file system is no folder either
        raise BadInputError(f"{prefix}: no such environment folder; give a prefix path or name:ENV")
    try:
        return str(prefix), interpreter(prefix)
    except BadInputError as exc:
        raise BadInputError(
            f"{prefix}: no Python interpreter in this environment; smoke runs the DataLoader there, "
            "so it needs python and torch installed"
        ) from exc


def _lock_fingerprints(lock: Path | None) -> Fingerprints | None:
    try:
        return None if lock is None else read_file(lock).fingerprints
    except NoPlatformEntry as exc:  # smoke has no --platform: the streams of this machine's entry
        raise exc.this_machine() from exc


def run_smoke(options: SmokeOptions, progress: bool = False) -> SmokeReport:
    """Run the whole smoke test and judge it; `progress`: a bar on stderr while the module runs."""
    started = time.perf_counter()
    recorded = recordfile.load(options.compare) if options.compare is not None else None
    label, python = _environment(options.source)
    lock = _lock_fingerprints(options.lock)
    # the golden streams: against the lock's, or carried by a recording
    probe = PROBE_SCRIPT if options.lock is not None or settings.recording(options) else None
    cpus = host.cpu_info()
    workers = settings.worker_counts(options, cpus)
    stored = readpasses.measure(options.data_dir, options.budget_s) if options.data_dir else None
    left = options.budget_s - (time.perf_counter() - started)
    budget = max(1.0, left - SETTLE_S)
    # the module plans for `budget`; at the --budget itself it is stopped, workers and all (a hang, a slow
    # import)
    memory = host.memory_info()
    limit = settings.memory_limit(options, memory)
    measured = runner.run_target(
        python,
        settings.settings(options, workers, budget, probe, cpus.usable, stored, recorded, limit),
        timeout=left + KILL_GRACE_S,
        progress=progress,
        memory_limit=limit,
    )
    runner.check_started(measured, label, options.device)
    datasets = tuple(
        rates.summarize(rates.claimable(entry), cpus.physical)  # issue 10: --sweep's ideal
        for entry in measured.datasets
    )
    pin = rates.pin_helps(measured.gpu)
    cuda = measured.device == "cuda"
    recs = {d.name: advice.recommend(d, cuda=cuda, pin_measured=pin, usable=cpus.usable) for d in datasets}
    shm = host.shm_info()
    facts = verdicts.HostFacts(
        cpus=cpus,
        shm=shm,
        available=memory.available,
        nvml_link=_nvml_max_link() if measured.gpu is not None else (None, None),
    )
    inputs = verdicts.Inputs(
        measured=measured,
        options=options,
        datasets=datasets,
        recommendations=recs,
        host=facts,
        lock=lock,
        stored=stored,
        recorded=recorded,
    )
    found = verdicts.judge(inputs)
    return SmokeReport(
        environment=label,
        python=str(measured.python),
        torch=measured.torch,
        numpy=measured.numpy,
        device=str(measured.device),
        start_method=str(measured.start_method),
        cpus=cpus,
        shm=shm,
        datasets=datasets,
        recommendations=tuple(r for r in recs.values() if r is not None),
        determinism=measured.determinism,
        gpu=measured.gpu,
        findings=tuple(found),
        budget_s=options.budget_s,
        elapsed_s=round(time.perf_counter() - started, 2),
        options=options,
        phase_seconds=measured.phase_seconds,
        pipeline=PipelineRecords(
            start_method_safety=measured.start_method_safety,
            loader=measured.loader,
            memory=measured.memory,
            startup=measured.startup,
            cross_process=measured.crossproc,
        ),
        storage=stored,
        decode_skipped=measured.decode_skipped,
        recording=_write_recording(options, measured, recorded),
        memory=measured.memory_use,
    )


def advise_workers(options: SmokeOptions) -> WorkerAdvice:
    """doctor --loader: run the user's loader only as far as the model needs (its settings, the start-method
    check and one profile of its dataset; no order, memory or cross-process checks) and judge it."""
    started = time.perf_counter()
    label, python = _environment(options.source)
    cpus, memory = host.cpu_info(), host.memory_info()
    limit = settings.memory_limit(options, memory)
    left = options.budget_s - (time.perf_counter() - started)
    measured = runner.run_target(
        python,
        settings.settings(options, [0], max(1.0, left - SETTLE_S), None, cpus.usable, None, None, limit),
        timeout=left + KILL_GRACE_S,
        memory_limit=limit,
    )
    runner.check_started(measured, label, options.device)
    facts = verdicts.HostFacts(cpus=cpus, shm=host.shm_info(), available=memory.available)
    return verdicts.worker_advice(measured, options, facts)


def _nvml_max_link() -> tuple[int | None, int | None]:
    """The first GPU's maximum PCIe link from envguard's own NVML, when the environment had none."""
    report = read_nvml()
    if not report.gpus:
        return None, None
    return report.gpus[0].pcie_max_gen, report.gpus[0].pcie_max_width


def _write_recording(
    options: SmokeOptions, measured: Measured, recorded: recordfile.Recording | None
) -> RecordingOutcome:
    """--record: write the file atomically; the report says what was written and what was compared."""
    observed = measured.first_batches
    samples = len(observed.samples) if observed else 0
    compared = (
        RecordingCompared(path=str(recorded.path), samples=len(recorded.samples), now=samples)
        if recorded is not None
        else None
    )
    written = None
    if options.record is not None and samples:
        which = f" --loader {options.loader}" if options.loader else ""
        which = f" --dataset {options.dataset}" if options.dataset else which
        reproduce = f"envguard smoke ENV{which} --compare {options.record.name}"
        replay = recordfile.replay(options.seed, options.batch_size, recorded)
        path = recordfile.write(options.record, observed, measured.golden, replay, reproduce)
        written = RecordingWritten(path=str(path), samples=samples)
    return RecordingOutcome(compared=compared, written=written)
