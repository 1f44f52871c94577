"""The input-pipeline model's worker advice for `--loader` without `--sweep` (smoke) and for `doctor --loader`
(pure): the loader's settings and its dataset's per-sample cost in, the final setting and its finding out.
Where the step watch measured runs more intra-op threads than the cores the job gets beside the load the
profile saw, the thread advice comes first, as in watch, and no worker setting: a step whose threads wait on
each other says nothing reliable about workers."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.pipeline import (
    MAX_WORKERS,
    RECEIVE_S,
    Advice,
    BatchCosts,
    Cores,
    Pipeline,
    Setting,
    Threads,
    advise,
    others_from_share,
    too_many_threads,
)
from envguard.smoke.measured import SampleCost

CATEGORY = "your loader"


def _others(cost: SampleCost, usable: int, delay_ms: float) -> float:
    """The other load while the dataset was profiled, as runnable processes, as watch reads it: the cores
    other processes kept busy (/proc/stat), or more where the one-thread worker got less than a core while it
    wanted one (CPU over CPU plus run-queue wait). A worker in a session of its own may get a whole core
    beside a busy process that the user's step, in the user's session, shares: the cores count then, less
    the host's cores beyond the usable ones (a quota on a bigger host)."""
    wanted = (cost.cpu_ms or 0.0) + delay_ms
    share = (cost.cpu_ms or 0.0) / wanted if wanted > 0 else None
    return others_from_share(usable, cost.others_cores or 0.0, share, 1.0, visible=cost.cpus)


ALONE_MOST = 4  # without the training step, advise at most this many workers per usable core


def worker_model(
    cost: SampleCost | None,
    given: Setting | None,
    usable: int,
    cuda: bool,
    step_ms: float | None = None,
    step_cores: float = 0.0,
    step_threads: int | None = None,
) -> tuple[Advice, Finding] | Threads | None:
    """--loader without --sweep (smoke, and doctor --loader): the worker advice of the input-pipeline model
    from the per-sample cost of the loader's dataset (CPU clocks and the off-CPU wait, profiled in one
    worker), for the loader alone or, with --step-ms, beside a training step of that many milliseconds per
    batch (as watch measures it); the advice and its finding, the thread advice instead where the step's
    intra-op threads (--step-threads, else torch's default where the profile ran) outnumber the cores the
    job gets, None when nothing was profiled."""
    if cost is None or given is None or cost.cpu_ms is None or cost.wall_ms is None:
        return None
    batch = given.batch_size or 1
    off = cost.off_ms if cost.off_ms is not None else max(0.0, cost.wall_ms - cost.cpu_ms)
    delay = max(0.0, cost.wall_ms - cost.cpu_ms - off)  # waiting for a core during the profile
    pipeline = Pipeline(
        costs=BatchCosts(
            load_cpu=cost.cpu_ms * batch / 1000,
            load_wait=off * batch / 1000,
            load_delay=delay * batch / 1000,
            step_wall=(step_ms or 0.0) / 1000,
            step_cpu=(step_ms or 0.0) / 1000 * step_cores,
            receive_cpu=RECEIVE_S,
        ),
        cores=Cores(usable, _others(cost, usable, delay)),
        current=Setting(given.num_workers, given.prefetch_factor, given.persistent_workers, given.pin_memory),
        accelerator=cuda,
        step_threads=step_threads if step_threads is not None else cost.threads,
    )
    threads = too_many_threads(pipeline) if step_ms is not None else None
    if threads is not None:
        return threads
    most = ALONE_MOST * max(usable, 1) if step_ms is None else MAX_WORKERS
    advice = advise(pipeline, most=most)
    alone = (
        "the loader alone delivers" if step_ms is None else f"beside a {step_ms:g} ms step the loop runs at"
    )
    if step_ms is not None and step_cores:
        alone = f"beside a {step_ms:g} ms step using {step_cores:g} cores the loop runs at"
    evidence = (
        f"per sample {cost.cpu_ms:g} ms of CPU and {off:g} ms off the CPU (profiled in one worker, "
        f"{cost.samples} samples), batches of {batch}, {usable} usable cores: as given "
        f"(num_workers={given.num_workers}) {alone} ~{advice.current_rate * batch:.0f} "
        f"samples/s; DataLoader({advice.setting.call()}) ~{advice.predicted_rate * batch:.0f} "
        f"({advice.gain:.2f}x, rule {advice.rule})"
    )
    notes = "".join(f"; {note}" for note in advice.notes)
    fix = (
        f"DataLoader(..., {advice.setting.call()}){notes}; with your training step the pace may be the "
        "step's: `envguard watch -- python train.py` gives the setting for the whole loop, "
        "`--sweep num_workers` measures each count"
    )
    return advice, Finding(f"throughput: {CATEGORY}", "worker advice (model)", "INFO", evidence, fix)


def model_advice(
    cost: SampleCost | None,
    given: Setting | None,
    usable: int,
    cuda: bool,
    step_ms: float | None = None,
    step_cores: float = 0.0,
    step_threads: int | None = None,
) -> list[Finding]:
    """The finding of `worker_model` (the worker advice, or the thread advice), none when nothing was
    profiled."""
    found = worker_model(cost, given, usable, cuda, step_ms, step_cores, step_threads)
    if isinstance(found, Threads):
        return [found.finding()]
    return [found[1]] if found is not None else []
