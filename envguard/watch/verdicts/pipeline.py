"""Watch's verdict on the input pipeline (pure, over the run's Summary): is the loop waiting for data, why
(workers computing, all cores busy, the disk, latency, loading in the main process) and what to change, with
the expected gain.

Throughput model (../shared/reference/dataloader.md): the loop runs at min(consumer, producer) where the
consumer rate is 1 / step time and the producer rate is what the loaders deliver. CPU-bound workers deliver in
proportion to the cores they get; latency-bound workers (sleeping on I/O) in proportion to their number.
"""

from __future__ import annotations

import math

from envguard.findings import Finding
from envguard.watch.records import LoaderTotals
from envguard.watch.result import Advice, Diagnosis
from envguard.watch.summary import Figures, Summary

INPUT_BOUND = 0.10  # data wait at or above this share of the loop: the input pipeline is the bottleneck
CPU_BOUND = 60.0  # mean worker CPU (percent of a core) at or above which workers are computing, not waiting
MIN_BATCHES = 20
MIN_LOOP_S = 2.0


def _cores(value: float) -> str:
    return f"{value:.1f}"


def _workers_text(fig: Figures) -> str:
    if not fig.workers or fig.worker_cpu is None:
        return "no worker processes"
    return f"{fig.workers} worker{'s' if fig.workers != 1 else ''} at {fig.worker_cpu:.0f}% CPU"


def fair_share_speedup(n: int, k: int, share: float, main: float, others: float, cores: int) -> float:
    """Speed-up of CPU-bound workers from n to k when the scheduler shares `cores` fairly between every
    runnable entity: k workers, the main process (`main` cores) and the other load. `share` is the core each
    of the n workers got; where it was below a full core, the other load is what explains it (C / share - n -
    main)."""
    if n <= 0 or share <= 0:
        return 1.0
    if share < 0.95:
        others = max(others, cores / share - n - main)
    share_k = min(1.0, cores / (k + main + others))
    return (k * share_k) / (n * min(share, 1.0))


def _reads(fig: Figures) -> str:
    """Busy workers that also read a lot spend their CPU on reading and decoding, not only on augmenting."""
    if fig.disk_read < 50e6:
        return ""
    return (
        f"; the workers also read {fig.disk_read / 1e6:.0f} MB/s from disk: smaller or pre-decoded files cut "
        "that CPU too"
    )


def _cpu_bound(loader: LoaderTotals, fig: Figures, usable: int) -> tuple[str, Advice | None]:
    """Workers computing: more of them while the job leaves cores unused; else make each batch cheaper."""
    n = loader.settings.workers
    producer = loader.batches / loader.loop_s
    consumer = loader.batches / loader.step_s if loader.step_s > 0 else math.inf
    spare = usable - fig.job_cores  # cores the job leaves unused
    others = max(0.0, fig.busy_cores - fig.job_cores)
    share = (fig.worker_cpu or 0.0) / 100
    k = min(usable, n + max(1, round(spare))) if n < usable else n
    needed = math.ceil(n * consumer / producer) if math.isfinite(consumer) else k
    k = max(n, min(k, needed))
    speedup = min(fair_share_speedup(n, k, share, fig.main_cores, others, usable), consumer / producer)
    if k <= n or speedup < 1.1:
        why = (
            f"the job uses {_cores(fig.job_cores)} and other processes {_cores(others)} of {usable} cores"
            if others >= 0.5
            else f"the job already uses {_cores(fig.job_cores)} of {usable} cores"
        )
        return "all-cores-busy", Advice(
            "augmentation",
            None,
            f"{why}: more workers cannot help; make each batch cheaper (vectorise the augmentation, run it "
            "on "
            f"the GPU with torchvision.transforms.v2 or DALI, cache decoded samples){_reads(fig)}",
            None,
        )
    busy = f"; other processes use {_cores(others)} cores" if others >= 0.25 else ""
    text = (
        f"num_workers={k} (from {n}): {_cores(spare)} of {usable} cores unused by the job{busy}; expected "
        f"~{speedup:.2f}x ({producer:.1f} -> {producer * speedup:.1f} batches/s)"
    )
    return "cpu", Advice("num_workers", k, text, round(speedup, 3))


def _waiting(loader: LoaderTotals, fig: Figures, usable: int) -> tuple[str, Advice | None]:
    """Workers mostly off the CPU: the disk (iowait, D state) or latency (remote storage, sleeps)."""
    n = max(1, loader.settings.workers)
    producer = loader.batches / loader.loop_s
    consumer = loader.batches / loader.step_s if loader.step_s > 0 else math.inf
    disk = (fig.iowait or 0.0) >= 10.0 or fig.dstate >= 0.2
    if disk:
        text = (
            f"the disk: iowait {fig.iowait or 0:.0f}%, workers in D state {fig.dstate:.0%} of samples, reads "
            f"{fig.disk_read / 1e6:.1f} MB/s (peak {fig.disk_peak / 1e6:.1f}); move the data to local SSD or "
            "tmpfs, pack small files into larger shards; add workers only if the disk has headroom"
        )
        return "io", Advice("storage", None, text, None)
    ratio = consumer / producer if math.isfinite(consumer) else 2.0
    cpu_room = usable / fig.job_cores if fig.job_cores > 0 else ratio
    k = max(n + 1, math.ceil(n * min(ratio, cpu_room, 4.0)))
    speedup = max(1.0, min(k / n, ratio, cpu_room))
    text = (
        f"num_workers={k} (from {n}): workers wait off-CPU ({fig.worker_cpu or 0:.0f}% CPU, no iowait), so "
        "more "
        f"of them overlap the waits; expected ~{speedup:.2f}x ({producer:.1f} -> {producer * speedup:.1f} "
        "batches/s); also: local SSD/tmpfs or larger files if the data is remote"
    )
    return "latency", Advice("num_workers", k, text, round(speedup, 3))


def _in_main(loader: LoaderTotals, fig: Figures, usable: int) -> tuple[str, Advice | None]:
    """num_workers=0: the main process loads between steps; workers run loading alongside the step."""
    per_batch, step = loader.wait_s / loader.batches, loader.step_s / loader.batches
    k = max(1, min(usable - 1 if usable > 1 else 1, math.ceil(per_batch / step) if step > 0 else usable))
    rate_now = 1 / (per_batch + step)
    rate_new = min(1 / step if step > 0 else math.inf, k / per_batch)
    speedup = max(1.0, rate_new / rate_now)
    text = (
        f"num_workers={k} (from 0): the main process spends {per_batch * 1e3:.1f} ms per batch loading "
        f"between {step * 1e3:.1f} ms steps; expected ~{speedup:.2f}x"
    )
    return "in-main", Advice("num_workers", k, text, round(speedup, 3))


def _input(summary: Summary, loader: LoaderTotals, fraction: float) -> Diagnosis:
    fig, usable = summary.figures, summary.usable_cpus
    n = loader.settings.workers
    if n == 0:
        cause, advice = _in_main(loader, fig, usable)
    elif (fig.worker_cpu or 0.0) >= CPU_BOUND or fig.runnable >= 0.5:
        cause, advice = _cpu_bound(loader, fig, usable)
    else:
        cause, advice = _waiting(loader, fig, usable)
    idle = max(0.0, usable - fig.busy_cores)
    headline = (
        f"input-bound: the loop waits for data {fraction:.0%} of the time; {_workers_text(fig)}; "
        f"{_cores(idle)} of {usable} cores idle"
    )
    evidence = (
        f"wait {loader.wait_s:.1f} s of {loader.loop_s:.1f} s loop over {loader.batches} batches "
        f"({loader.batches / loader.loop_s:.1f}/s); {_workers_text(fig)}; job {_cores(fig.job_cores)} cores, "
        f"host {_cores(fig.busy_cores)} of {fig.cores} busy; iowait {fig.iowait or 0:.0f}%"
    )
    label = {
        "cpu": "CPU-bound workers",
        "all-cores-busy": "CPU-bound, all cores busy",
        "io": "I/O-bound (disk)",
        "latency": "I/O/latency-bound workers",
        "in-main": "loading in the main process",
    }[cause]
    finding = Finding(
        "input pipeline",
        f"input-bound: {label}",
        "FAIL" if fraction >= 0.3 else "WARN",
        evidence,
        advice.text if advice else "",
    )
    return Diagnosis("input-bound", cause, headline, round(fraction, 4), _rate(loader), (finding,), advice)


def _rate(loader: LoaderTotals) -> float | None:
    return round(loader.batches / loader.loop_s, 3) if loader.loop_s > 0 else None


NO_TIMING = {
    "off": "the in-process hook was off (--no-hook or --pid)",
    "no-loader": "no torch DataLoader was iterated",
}


def pipeline_diagnosis(summary: Summary) -> Diagnosis:
    """The input pipeline's verdict: no loader timing, too short to judge, not input-bound, or input-bound
    with its cause and the advice (its one finding first; the other concerns' findings are added by
    `verdicts.judge`)."""
    fig, loader = summary.figures, summary.loader
    batches, wait, loop = summary.batches, summary.wait_s, summary.loop_s
    if loader is None or batches == 0:
        why = NO_TIMING.get(summary.hook.state, "no loader data")
        headline = (
            f"no loader timing: {why}; the job used {_cores(fig.job_cores)} of {summary.usable_cpus} cores"
        )
        finding = Finding("input pipeline", "data wait", "INFO", headline)
        return Diagnosis("no loader timing", "", headline, None, None, (finding,), None)
    fraction = wait / loop
    if batches < MIN_BATCHES or loop < MIN_LOOP_S:
        headline = (
            f"too short to judge: {batches} batches in {loop:.1f} s (need {MIN_BATCHES} and {MIN_LOOP_S:g} s)"
        )
        finding = Finding(
            "input pipeline", "data wait", "INFO", headline, "watch a longer stretch of training"
        )
        return Diagnosis(
            "too short to judge", "", headline, round(fraction, 4), _rate(loader), (finding,), None
        )
    if fraction < INPUT_BOUND:
        gpu = f"; GPU {fig.gpu_util:.0f}% busy" if fig.gpu_util is not None else ""
        headline = f"not input-bound: the loop waits for data {fraction:.0%} of the time{gpu}"
        evidence = f"wait {wait:.2f} s of {loop:.1f} s loop over {batches} batches{gpu}"
        finding = Finding("input pipeline", "data wait", "PASS", evidence, "")
        return Diagnosis(
            "not input-bound",
            "",
            headline + "; nothing to fix in the input pipeline",
            round(fraction, 4),
            _rate(loader),
            (finding,),
            None,
        )
    return _input(summary, loader, fraction)
