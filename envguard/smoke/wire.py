"""The in-environment module's JSON line -> `measured.Measured`, parsed once and type-checked on the way: a
field of the wrong type or a required one missing is one ProbeError line naming where in the output it is.

Optional fields take the defaults the module's own code paths imply (a row skipped for the budget carries no
timings; an entry whose dataset could not be built has no rows); required ones are those it always prints.
"""

from __future__ import annotations

from envguard.errors import ProbeError
from envguard.model import Fingerprints, fingerprints_from
from envguard.smoke.measured import (
    BatchTimes,
    ConfigMeasurement,
    CpuContention,
    DatasetSweep,
    FirstBatches,
    GpuPhase,
    HostToDevice,
    IdleRun,
    LoaderConfig,
    Measured,
    MemoryUse,
    Observation,
    Pass,
    PcieLink,
    PhaseError,
    Roundtrip,
    SampleCost,
    SampleDigests,
    SeededRun,
    SeededRuns,
)
from envguard.smoke.typedjson import Malformed, Obj
from envguard.smoke.wire_pipeline import (
    cross_process,
    loader_checks,
    skipped_check,
    start_method_safety,
    startup_times,
    worker_memory,
)

# -- the throughput sweep


def config_measurement(row: Obj) -> ConfigMeasurement:
    config = LoaderConfig(
        workers=row.integer("workers"),
        pin_memory=row.flag("pin_memory"),
        persistent_workers=row.flag("persistent_workers"),
        prefetch_factor=row.opt_integer("prefetch_factor"),
    )
    arrivals = row.numbers("arrivals_s")
    skipped = row.opt_text("skipped") or ("" if arrivals else "no batches")
    if skipped:
        return ConfigMeasurement(config=config, skipped=skipped)
    return ConfigMeasurement(
        config=config,
        batch_size=row.integer("batch_size"),
        batches=row.integer("batches"),
        batch_bytes=row.opt_integer("batch_bytes") or 0,
        times=BatchTimes(arrivals_s=arrivals, waits_s=row.numbers("waits_s")),
        epoch2_first_batch_s=row.opt_number("epoch2_first_batch_s"),
        step_s=row.opt_number("step_s") or 0.0,
        wall_s=row.opt_number("wall_s"),
        main_cpu_s=row.opt_number("main_cpu_s"),
        contention=CpuContention(
            others_cpu=row.opt_number("others_cpu_fraction"),
            throttled=row.opt_number("throttled_fraction"),
            psi_some=row.opt_number("psi_some_fraction"),
        ),
        given=row.flag("given"),
        passes=row.each("passes", _pass),
    )


def _pass(timed: Obj) -> Pass:
    return Pass(
        round=timed.integer("round"),
        times=BatchTimes(arrivals_s=timed.numbers("arrivals_s"), waits_s=timed.numbers("waits_s")),
        wall_s=timed.opt_number("wall_s"),
        main_cpu_s=timed.opt_number("main_cpu_s"),
    )


def _sample_cost(profile: Obj) -> SampleCost:
    return SampleCost(
        wall_ms=profile.opt_number("wall_ms"),
        cpu_ms=profile.opt_number("cpu_ms"),
        samples=profile.opt_integer("samples") or 0,
        off_ms=profile.opt_number("off_ms"),
        others_cores=profile.opt_number("others_cores"),
        threads=profile.opt_integer("threads"),
        cpus=profile.opt_integer("cpus"),
    )


def dataset_sweep(entry: Obj) -> DatasetSweep:
    return DatasetSweep(
        name=entry.text("name"),
        nominal_latency_ms=entry.opt_number("nominal_latency_ms"),
        nominal_cpu_ms=entry.opt_number("nominal_cpu_ms"),
        length=entry.opt_integer("length"),
        iterable=entry.flag("iterable"),
        profile=entry.optional("profile", _sample_cost),
        rows=entry.each("rows", config_measurement),
        error=entry.opt_text("error") or "",
    )


# -- the seeded determinism runs


def _observation(sample: Obj) -> Observation:
    return Observation(worker=sample.integer("w"), identity=sample.text("id"), fields=sample.text_map("f"))


def _seeded_run(runs: Obj, name: str) -> SeededRun:
    run = runs.obj(name)
    return SeededRun(
        workers=run.integer("workers"),
        persistent=run.flag("persistent"),
        epochs=run.nested("epochs", _observation),
        order_digests=run.texts("order_digests"),
        stream_digests=run.texts("stream_digests"),
        seconds=run.number("seconds"),
    )


def seeded_runs(record: Obj) -> SeededRuns:
    return SeededRuns(
        dataset=record.opt_text("dataset"),
        seed=record.integer("seed"),
        batch_size=record.integer("batch_size"),
        limit=record.integer("limit"),
        runs=record.mapping("runs", _seeded_run),
        skipped=record.texts("skipped"),
    )


# -- the GPU phase


def _roundtrip(trip: Obj) -> Roundtrip:
    return Roundtrip(
        host=trip.text("host"),
        after_device=trip.text("after_device"),
        equal=trip.flag("equal"),
        structure=trip.text("structure"),
        tensors=trip.integer("tensors"),
        bytes=trip.integer("bytes"),
    )


def _link(link: Obj) -> PcieLink:
    return PcieLink(
        available=link.flag("available"),
        reason=link.opt_text("reason"),
        gen=link.opt_integer("gen"),
        width=link.opt_integer("width"),
        max_gen=link.opt_integer("max_gen"),
        max_width=link.opt_integer("max_width"),
        copies_queued=link.opt_integer("copies_queued"),
    )


def _h2d(h2d: Obj) -> HostToDevice:
    return HostToDevice(
        bytes=h2d.integer("bytes"),
        reps=h2d.integer("reps"),
        pageable_gbps=h2d.opt_number("pageable_gbps"),
        pinned_gbps=h2d.opt_number("pinned_gbps"),
        link=_link(h2d.obj("link")),
        pinned_reason=h2d.opt_text("pinned_reason"),
    )


def _idle(run: Obj) -> IdleRun:
    return IdleRun(
        workers=run.integer("workers"),
        pin_memory=run.flag("pin_memory"),
        warmup_batches=run.integer("warmup_batches"),
        batches=run.integer("batches"),
        step_ms=run.number("step_ms"),
        busy_ms=run.number("busy_ms"),
        span_ms=run.number("span_ms"),
        idle_fraction=run.opt_number("idle_fraction"),
    )


def gpu_phase(gpu: Obj) -> GpuPhase:
    return GpuPhase(
        device=gpu.text("device"),
        name=gpu.text("name"),
        roundtrip=gpu.optional("roundtrip", _roundtrip),
        h2d=gpu.optional("h2d", _h2d),
        idle=gpu.each("idle", _idle),
        idle_skipped=gpu.integers("idle_skipped") if gpu.printed("idle_skipped") else None,
        capability=gpu.opt_text("capability"),
        memory_bytes=gpu.opt_integer("memory_bytes"),
        arch_list=gpu.texts("arch_list") if gpu.printed("arch_list") else None,
        uuid=gpu.opt_text("uuid"),
    )


# -- the run as a whole


def _sample_digests(sample: Obj) -> SampleDigests:
    return SampleDigests(index=sample.text("index"), fields=sample.text_map("fields"))


def first_batches(record: Obj) -> FirstBatches:
    return FirstBatches(
        dataset=record.opt_text("dataset"),
        batch_size=record.opt_integer("batch_size"),
        samples=record.each("samples", _sample_digests),
    )


def _phase_error(error: Obj) -> PhaseError:
    return PhaseError(phase=error.text("phase"), error=error.text("error"))


def _golden(probe: Obj) -> Fingerprints:
    """The fingerprint probe's output (run in the environment): its lists checked, its values read as text."""
    lists = {"cuda_arch_list": probe.texts("cuda_arch_list"), "errors": probe.texts("errors")}
    return fingerprints_from({**probe.plain(), **lists})


def measured(out: Obj) -> Measured:
    """The module's whole output (or, stopped at the budget, what it had written so far)."""
    return Measured(
        python=out.opt_text("python"),
        executable=out.opt_text("executable"),
        torch=out.opt_text("torch"),
        torch_cuda=out.opt_text("torch_cuda"),
        numpy=out.opt_text("numpy"),
        device=out.opt_text("device"),
        start_method=out.opt_text("start_method"),
        refusal=out.opt_text("error"),
        message=out.opt_text("message"),
        errors=out.each("errors", _phase_error),
        datasets=out.each("throughput", dataset_sweep),
        determinism=out.optional("determinism", seeded_runs),
        gpu=out.optional("gpu", gpu_phase),
        golden=out.optional("golden", _golden),
        phase_seconds=out.number_map("phase_seconds"),
        start_method_safety=out.optional("start_method_safety", start_method_safety),
        loader=out.optional("loader", loader_checks),
        memory=out.optional("memory", worker_memory),
        startup=out.optional("startup", startup_times),
        crossproc=out.optional("crossproc", cross_process),
        pipeline_skipped=out.each("pipeline_skipped", skipped_check),
        decode_skipped=out.opt_text("decode_skipped"),
        first_batches=out.optional("record", first_batches),
        loader_profile=out.optional("loader_profile", _sample_cost),
        memory_use=out.optional("memory_limit", memory_use) or MemoryUse(),
    )


def memory_use(record: Obj) -> MemoryUse:
    """The limit the module set on itself and its workers, its resident memory when it set it, and the most
    memory one of them held."""
    return MemoryUse(
        limit_bytes=record.opt_integer("limit_bytes"),
        peak_bytes=record.opt_integer("peak_bytes"),
        startup_bytes=record.opt_integer("startup_bytes"),
    )


def parse(data: object, source: object) -> Measured:
    """`data` (the module's JSON, already decoded) as records; anything malformed is one ProbeError line
    naming `source` (the interpreter) and the place in the output."""
    try:
        return measured(Obj(data, ""))
    except Malformed as exc:
        raise ProbeError(
            f"{source}: the smoke test printed malformed output ({exc}); the in-environment module and this "
            "envguard disagree: run the envguard that started it, or reinstall envguard"
        ) from None
