"""The throughput model of a DataLoader pipeline and the advice it gives (pure).

Rate with N workers, batches/s (per batch: loading CPU `Lc` and off-CPU wait `Lw`, step wall `S` and CPU `Sc`,
the main process's receive CPU `R`; `A(J)` the cores a job with J runnable processes gets beside the other
load, a fair share once the cores are full):

    N = 0:  1 / (Lc / A(1) + Lw + S + transfer)               the loop loads, then steps (measured at N = 0:
                                                                its loading wall time)
    N > 0:  min(1 / (S + R + transfer),                        the loop's own pace (the consumer)
                N / (Lc + Lw),                                 each worker delivers a batch per load
                A(J) / (Lc + Sc + R))                          all the CPU work shares the job's cores

When the step alone keeps the job's cores busy (its intra-op threads), the workers' CPU time lands inside the
step instead of beside it, once for each core the step keeps busy (its threads wait for the one a worker
holds): the consumer becomes 1 / (S + Lc * max(Sc / S, 1) + R + transfer), so workers only hide the off-CPU
waits (measured on imagenet, 2 cores: more workers made it 0.92x, the model 0.88x). At N = 0 measured in the
main process, the loading is taken as measured (its run-queue wait included); measured in a worker, the main
process's share of a core A(1) scales its CPU time. The advice is the fewest workers (0-4, then 6, 8, 12,
16, 24, 32: COUNTS) within NEAR_BEST of the best predicted rate, kept as it is when the gain is under
MIN_GAIN; the gain is a ratio of two predictions, applied to the measured rate where there is one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from envguard.pipeline.costs import Cores, Pipeline, Setting

MAX_WORKERS = 32  # the most workers advised: I/O waits can use more than cores, memory and start-up cap it
# the worker counts advised: each a third or more above the one below past 4, so two measurements a few
# percent apart (smoke's profile and watch's run) do not land on neighbours (the sleep pipeline: 7 and 8)
COUNTS = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
NEAR_BEST = 0.03  # the fewest workers whose predicted rate is within 3% of the best
MIN_GAIN = 1.05  # a change predicted to gain less than this is not advised (the setting is kept)
PERSISTENT_S = 0.1  # worker start-up per epoch that persistent_workers=True must save to be advised
BURSTY = 2.0  # loading time's p95 over its median above which prefetch_factor 4 absorbs the bursts
COMPETE_MARGIN = 0.5  # the step keeps all but this many of the job's cores busy: loading competes with it
PARALLEL_STEP = 1.2  # cores a step keeps busy to count as running intra-op threads on several cores
CPU_STEP = 0.5  # cores a step wants (busy, or waiting for one) to count as CPU work (a GPU step mostly waits)
PREFETCH_WAIT = 0.10  # the loop waits for data this share of its time or more: deeper prefetch can help
OVERSUBSCRIBED = 0.5  # the step's threads past the cores the job gets beside the other load, to advise fewer

Limit = Literal["serial", "step", "workers", "cores"]
LIMITS: dict[str, str] = {
    "step": "the step's pace",
    "workers": "the workers",
    "cores": "the cores",
    "serial": "loading and the step in turn",
}
Rule = Literal["keep", "in-main", "overlap-waits", "spare-cores", "fewer-workers", "compete", "cores-busy"]


@dataclass(frozen=True, slots=True)
class Prediction:
    """The predicted rate of one worker count (batches/s) and the term that bounds it."""

    workers: int
    rate: float
    limit: Limit


@dataclass(frozen=True, slots=True)
class Advice:
    """The final setting in one step: what to set, the rule that produced it, the predicted rates (model)
    and gain, the predicted throughput (the measured rate times the gain, where a rate was measured), why,
    and notes on the arguments that do nothing here."""

    setting: Setting
    current: Setting
    rule: Rule
    gain: float
    predicted_rate: float
    current_rate: float
    reason: str
    competes: bool = False
    notes: tuple[str, ...] = ()
    band: tuple[float, float] | None = None  # the gain's range from the measured rate's spread
    limit: Limit = "step"  # the term that bounds the advised setting's predicted rate

    @property
    def bounded_by(self) -> str:
        """What bounds the advised setting, in words."""
        return LIMITS[self.limit]

    @property
    def changed(self) -> bool:
        return self.setting != self.current


def most_workers(usable: int, ranks: int = 1) -> int:
    """num_workers per rank for loading that computes (every worker busy on a core): each rank's share of the
    usable CPUs (affinity and quota, floored) less the one its main process keeps busy; 0 where a rank has
    only that one. The model's bound without measured costs (doctor's checklist, smoke's default count)."""
    return max(0, usable // max(ranks, 1) - 1)


def job_cores(cores: Cores, runnable: float) -> float:
    """Cores a job with `runnable` busy processes can get: those the other load leaves free while both fit,
    else the scheduler's fair share of the usable cores (the two meet where the cores fill up)."""
    runnable, others = max(runnable, 0.0), max(cores.others, 0.0)
    if runnable + others <= cores.usable:
        return cores.usable - others
    return cores.usable * runnable / (runnable + others)


def competes(pipeline: Pipeline) -> bool:
    """The step's intra-op threads alone keep the job's cores busy, and loading has CPU work to add to them:
    a worker then takes a core from one of the step's threads and the whole step waits for that thread.
    On a busy machine the step gets fewer cores than it has threads, and keeps busy all the job can get:
    a step using every core it can get (at least CPU_STEP of one) counts as threaded there. A step known to
    run one intra-op thread (and keep no more than one core busy) never competes: it holds one core, and a
    worker runs on another or shares fairly (pyload on one thread at a load of 7: 2 workers 2.4x)."""
    costs, cores = pipeline.costs, pipeline.cores
    if pipeline.step_threads == 1 and costs.step_cores < PARALLEL_STEP:
        return False
    free = job_cores(cores, float(cores.usable))
    threaded = costs.step_cores >= min(PARALLEL_STEP, max(CPU_STEP, free - COMPETE_MARGIN))
    return threaded and costs.load_cpu > 0 and costs.step_cores >= free - COMPETE_MARGIN


def step_threads(pipeline: Pipeline) -> int | None:
    """The intra-op threads to give a CPU step that runs more of them than the cores the job gets (its own
    quota, or its fair share beside the other load); None where its threads fit, are unknown, or the step is
    not CPU work. A threaded step waits at each of its parallel regions for its slowest thread, so one thread
    off the CPU holds up the rest (OpenMP's spin-wait burns their cores meanwhile): on 2 cores with another
    process spinning, imagenet's step ran 2.4 batches/s with 2 threads and 84 with 1. The step's pace with
    fewer threads is not predicted (its CPU time here is mostly that waiting): it is measured again. A CPU
    step is one that wants CPU_STEP of a core (kept busy, or its main thread waiting for one): on a busy host
    a step with too many threads keeps little busy (mnist: 0.2-0.5 cores, 1.9x faster on one thread), so the
    cores it got alone would switch the diagnosis off."""
    threads, costs = pipeline.step_threads, pipeline.costs
    if not threads or threads < 2 or costs.step_wants < CPU_STEP:
        return None
    gets = job_cores(pipeline.cores, float(threads))
    if threads <= gets + OVERSUBSCRIBED:
        return None
    return max(1, min(threads - 1, math.floor(gets + 0.25)))


def rate(pipeline: Pipeline, workers: int) -> Prediction:
    """The predicted rate with `workers` workers (see the module docstring)."""
    costs, cores = pipeline.costs, pipeline.cores
    if workers == 0:
        per_batch = costs.load_wall + costs.step_wall + costs.transfer  # as measured in the main process
        if pipeline.current.num_workers:  # measured in a worker: the main process gets its share of a core
            share = max(min(1.0, job_cores(cores, 1.0)), 1e-3)
            per_batch = max(
                per_batch, costs.load_cpu / share + costs.load_wait + costs.step_wall + costs.transfer
            )
        return Prediction(0, 1.0 / max(per_batch, 1e-9), "serial")
    step = costs.step_wall + costs.receive_cpu + costs.transfer
    if competes(pipeline):  # each of the step's threads waits while a worker holds its core
        step += costs.load_cpu * max(costs.step_cores, 1.0)
    work = costs.load_cpu + costs.step_cpu + costs.receive_cpu
    runnable = _runnable(pipeline, workers, step)
    return _bounded(workers, step, costs.load_wall, job_cores(cores, runnable), work, runnable, pipeline)


def _step(pipeline: Pipeline) -> float:
    """The loop's own time per batch with workers: the step, receiving the batch and the device copy."""
    costs = pipeline.costs
    return costs.step_wall + costs.receive_cpu + costs.transfer


def _runnable(pipeline: Pipeline, workers: int, step: float) -> float:
    """The job's runnable processes with `workers` workers: the step's cores, and the workers for the share
    of wall time they load (at the pace the step and they allow), not all the time: idle workers are no CPU
    demand. More than the usable cores would only take CPU from the other load: not counted on. At 0
    workers, the main process alone."""
    costs = pipeline.costs
    if workers == 0:
        return 1.0
    pace = min(
        1.0 / step if step > 0 else math.inf, workers / costs.load_wall if costs.load_wall > 0 else math.inf
    )
    loading = (
        min(float(workers), pace * (costs.load_cpu + costs.load_delay)) if math.isfinite(pace) else workers
    )
    return min(max(costs.step_cores, 0.1) + loading, float(pipeline.cores.usable))


def _bounded(
    workers: int, step: float, load_wall: float, free: float, work: float, runnable: float, pipeline: Pipeline
) -> Prediction:
    """The lowest of the three bounds of a worker count. For more workers than the current setting, the cores
    are calibrated on that setting: the cores it used (its measured rate times its CPU per batch; the model's
    own rate where no loop was measured, as smoke and doctor read it) grow by the fair share the extra
    runnable processes win, never shrink (the fair share alone took others counted from a busy host for
    more than they got: imagenet at 1 thread was predicted 0.5-0.8x with idle workers)."""
    costs, cores, now = pipeline.costs, pipeline.cores, pipeline.current.num_workers
    if workers > now:
        reference = pipeline.measured_rate or rate(pipeline, now).rate
        before = _runnable(pipeline, now, _step(pipeline))
        used = reference * (costs.load_cpu + costs.step_cpu + (costs.receive_cpu if now else 0.0))
        grown = job_cores(cores, runnable) / max(job_cores(cores, before), 1e-9)
        free = max(free, min(used * max(grown, 1.0), float(cores.usable)))
    bounds: list[tuple[float, Limit]] = [
        (1.0 / step if step > 0 else math.inf, "step"),
        (workers / load_wall if load_wall > 0 else math.inf, "workers"),
        (free / work if work > 0 else math.inf, "cores"),
    ]
    value, limit = min(bounds, key=lambda b: b[0])
    return Prediction(workers, value if math.isfinite(value) else 1e9, limit)


def predictions(pipeline: Pipeline, most: int = MAX_WORKERS) -> tuple[Prediction, ...]:
    """The predicted rate of each worker count the advice may give (COUNTS up to `most`) and the current
    one."""
    counts = sorted({n for n in COUNTS if n <= most} | {pipeline.current.num_workers})
    return tuple(rate(pipeline, n) for n in counts)


def choose(pipeline: Pipeline, most: int = MAX_WORKERS) -> tuple[int, tuple[Prediction, ...]]:
    """The fewest workers (of COUNTS) within NEAR_BEST of the best predicted rate, 0 only where it is the
    best (it puts every batch's loading on the loop's path, and the loading figure is the one most in doubt:
    'tuned' at 0 was predicted 2.6% slower and measured 7%); the current count instead when that means more
    workers for a gain under MIN_GAIN."""
    rates = predictions(pipeline, most)
    best = max(p.rate for p in rates)
    near = [p for p in rates if p.rate >= (1 - NEAR_BEST) * best and (p.workers or p.rate >= best)]
    pick = min(p.workers for p in near)
    now = next(p for p in rates if p.workers == pipeline.current.num_workers)
    chosen = next(p for p in rates if p.workers == pick)
    if pick < now.workers:  # as fast with fewer: less memory, start-up and contention
        return pick, rates
    if chosen.rate < MIN_GAIN * now.rate:
        return now.workers, rates
    return pick, rates


def _setting(pipeline: Pipeline, workers: int) -> tuple[Setting, tuple[str, ...]]:
    """The whole setting for `workers`: prefetch_factor, persistent_workers, pin_memory, with the notes (each
    whenever it applies, whatever the worker count does)."""
    current, notes = pipeline.current, []
    prefetch = (current.prefetch_factor or 2) if workers else None
    # deeper prefetch only where the loop waits for data: a loop that never waits gains nothing from it
    waits = pipeline.data_wait is None or pipeline.data_wait >= PREFETCH_WAIT
    if workers and waits and pipeline.burstiness is not None and pipeline.burstiness >= BURSTY:
        prefetch = max(prefetch or 2, 4)
        notes.append(
            f"prefetch_factor={prefetch}: loading a batch varies (p95 {pipeline.burstiness:.1f}x its "
            "median), more batches in flight absorb the slow ones"
        )
    persistent = bool(workers) and current.persistent_workers
    startup = pipeline.startup_s
    if workers and startup is not None and startup >= PERSISTENT_S:
        persistent = True
        if not current.persistent_workers:
            notes.append(f"persistent_workers=True: saves {startup:.2f} s of worker start-up every epoch")
    elif workers and not current.num_workers and not current.persistent_workers:
        persistent = True  # off num_workers=0 the start-up is not measured: pay it once, not every epoch
        notes.append("persistent_workers=True: the workers start once, not again every epoch")
    pin = pipeline.accelerator
    if current.pin_memory and not pipeline.accelerator:
        notes.append(
            "pin_memory=True does nothing without an accelerator (no device copy to speed up): drop it"
        )
    elif pin and not current.pin_memory:
        notes.append("pin_memory=True: batches go to the device from page-locked memory, asynchronously")
    return Setting(workers, prefetch, persistent, pin), tuple(notes)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def _costs_text(pipeline: Pipeline) -> str:
    costs = pipeline.costs
    load = (
        f"loading {_ms(costs.load_wall)} per batch (CPU {_ms(costs.load_cpu)}, "
        f"off-CPU {_ms(costs.load_wait)}"
        + (f", waiting for a core {_ms(costs.load_delay)}" if costs.load_delay >= 0.0005 else "")
        + ")"
    )
    step = f"a {_ms(costs.step_wall)} step"
    if costs.step_cpu > 0:
        step += f" using {costs.step_cores:.1f} cores"
        waiting = costs.step_wants - costs.step_cores
        if waiting >= 0.05:
            step += f", waiting for one {waiting:.0%} of it"
        if pipeline.step_threads:
            step += f" ({pipeline.step_threads} intra-op threads)"
    busy = pipeline.cores.others
    others = f"; other load: {busy:.1f} runnable processes" if busy >= 0.25 else ""
    return f"{load}, {step}, {pipeline.cores.usable} usable cores{others}"


def _rule(pipeline: Pipeline, workers: int, rates: tuple[Prediction, ...]) -> Rule:
    now_workers = pipeline.current.num_workers
    now = next(p for p in rates if p.workers == now_workers)
    if workers == now_workers:
        if competes(pipeline):
            return "compete"
        more = rate(pipeline, now_workers + 1)  # what one more worker would run into
        return "cores-busy" if "cores" in (now.limit, more.limit) else "keep"
    if workers < now_workers:
        return "fewer-workers"
    if now_workers == 0:
        return "in-main"
    return "overlap-waits" if pipeline.costs.load_wait >= pipeline.costs.load_cpu else "spare-cores"


def _reason(pipeline: Pipeline, rule: Rule, workers: int, gain: float, rates: dict[int, Prediction]) -> str:
    now = pipeline.current.num_workers
    figures = _costs_text(pipeline)
    chosen = rates[workers]
    if rule == "compete":
        with_one = rates[now + 1]
        return (
            f"{figures}: loading and the step compete for the same cores, so workers would move the loading "
            f"into the step instead of beside it (predicted {with_one.rate / rates[now].rate:.2f}x with "
            f"num_workers={with_one.workers}); keep num_workers={now}, or give the step fewer threads "
            "(torch.set_num_threads) to leave a core for loading, and measure again"
        )
    if rule == "cores-busy":
        return (
            f"{figures}: the job's cores are busy with loading and the step, so more workers cannot help; "
            "make each batch cheaper (vectorise the augmentation, decode smaller images, cache decoded "
            "samples)"
        )
    if rule == "keep":
        bound = {"step": "the training step sets the pace", "workers": "more workers gain under 5%"}
        return f"{figures}: {bound.get(chosen.limit, 'another worker count gains under 5%')}"
    why = {
        "in-main": "the main process loads between steps; workers load beside the step",
        "overlap-waits": "workers wait off the CPU, so more of them overlap the waits",
        "spare-cores": "loading is CPU work and the job's cores have room for more workers",
        "fewer-workers": "fewer workers give the same rate with less memory and start-up",
    }[rule]
    pace = LIMITS[chosen.limit]
    return f"{figures}: {why}; predicted {gain:.2f}x, then bounded by {pace}"


def advise(pipeline: Pipeline, most: int = MAX_WORKERS) -> Advice:
    """The final setting (num_workers, prefetch_factor, persistent_workers, pin_memory) in one step, its
    predicted gain over the current setting with a band from the measured rate's spread, and the rule that
    gave it; at most `most` workers. More workers whose gain the band does not keep above 1 are not advised
    (advice from noise)."""
    workers, rates = choose(pipeline, most)
    by_count = {p.workers: p for p in rates}
    now = by_count[pipeline.current.num_workers]
    spread = pipeline.spread or 0.0
    if workers > now.workers and by_count[workers].rate * (1 - spread) < now.rate:
        workers = now.workers
    gain = by_count[workers].rate / now.rate if now.rate > 0 else 1.0
    rule = _rule(pipeline, workers, rates)
    setting, notes = _setting(pipeline, workers)
    measured = pipeline.measured_rate or now.rate
    # the ratio of two predictions carried onto the measured rate, never past the new setting's own bound
    bound = max(by_count[workers].rate, measured)
    predicted = min(measured * gain, bound) if workers != now.workers else measured
    gain = predicted / measured if measured > 0 else gain
    return Advice(
        setting=setting,
        current=pipeline.current,
        rule=rule,
        gain=round(gain, 3),
        predicted_rate=round(predicted, 3),
        current_rate=round(measured, 3),
        reason=_reason(pipeline, rule, workers, gain, by_count),
        competes=competes(pipeline),
        notes=notes,
        band=(round(gain * (1 - spread), 3), round(gain * (1 + spread), 3)) if spread else None,
        limit=by_count[workers].limit,
    )
