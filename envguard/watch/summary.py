"""Reduce a WatchRun to what the verdicts and the views cite (pure): the figures over its steady window, the
loader it spent its time in with the totals over every loader, and the per-interval timeline."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from statistics import fmean, stdev

from envguard.pipeline import RECEIVE_S, BatchCosts, Cores, Pipeline, Setting, others_from_share
from envguard.watch.records import FetchTotals, HookStatus, LoaderTotals, Sample, WatchRun

MiB = 1024 * 1024
LANES_FULL = 0.5  # the loop waits for data this share of the time or more: every worker is the bottleneck


@dataclass(frozen=True, slots=True)
class Figures:
    """Means over the steady window (samples where batches were flowing; all samples when none were)."""

    window: int
    workers: int
    worker_cpu: float | None  # mean percent of one core per worker
    worker_cores: float  # cores the workers used together
    main_cores: float
    job_cores: float
    busy_cores: float  # the whole host
    cores: int
    iowait: float | None
    steal: float | None
    psi_cpu: float | None
    dstate: float  # share of worker samples in D state (0..1)
    runnable: float  # share of worker samples running or waiting for a core (R state, 0..1)
    disk_read: float  # bytes/s, all disks, mean
    disk_peak: float
    worker_growth: float  # largest USS growth of one worker over its life, bytes
    worker_growth_s: float  # over how many seconds
    worker_first_uss: float
    shm_peak: float | None  # share of /dev/shm used (0..1)
    mem_available_min: float  # share of RAM available (0..1)
    swap_growth: int
    gpu_util: float | None
    # that worker's USS series: (seconds since it was first sampled, bytes), every sample
    worker_series: tuple[tuple[float, int], ...] = ()


def steady(samples: tuple[Sample, ...]) -> list[Sample]:
    """Samples in which the loaders' batch count grew since the previous sample."""
    out: list[Sample] = []
    for before, after in itertools.pairwise(samples):
        if sum(lt.batches for lt in after.loaders) > sum(lt.batches for lt in before.loaders):
            out.append(after)
    return out or list(samples[1:]) or list(samples)


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def _growth(samples: tuple[Sample, ...]) -> tuple[float, float, float, tuple[tuple[float, int], ...]]:
    """(largest USS growth of one worker, over seconds, its first USS, its whole USS series)."""
    series: dict[int, list[tuple[float, int]]] = {}
    for sample in samples:
        for proc in sample.procs:
            if proc.role == "worker" and proc.uss is not None:
                series.setdefault(proc.pid, []).append((sample.t, proc.uss))
    best: tuple[float, float, float, tuple[tuple[float, int], ...]] = (0.0, 0.0, 0.0, ())
    for points in series.values():
        (t0, uss0), peak = points[0], max(points, key=lambda p: p[1] - points[0][1])
        if peak[1] - uss0 > best[0]:
            shown = tuple((round(t - t0, 2), uss) for t, uss in points)
            best = (float(peak[1] - uss0), peak[0] - t0, float(uss0), shown)
    return best


def figures(run: WatchRun) -> Figures:
    window = steady(run.samples)
    per_worker = [p.cpu for s in window for p in s.procs if p.role == "worker"]
    workers = [p for s in window for p in s.procs if p.role == "worker"]
    n = len(window) or 1
    cores = max((len(s.host.per_core) for s in window), default=run.usable_cpus) or run.usable_cpus
    growth, growth_s, first_uss, series = _growth(run.samples)
    disk = [sum(s.host.disk_read.values()) for s in window]
    shm = [
        s.host.shm_used / s.host.shm_total
        for s in run.samples
        if s.host.shm_total and s.host.shm_used is not None
    ]
    gpus = [
        g.utilization
        for s in window
        for g in s.gpus
        if g.utilization is not None and (g.used_by_tree or not any(x.used_by_tree for x in s.gpus))
    ]
    return Figures(
        window=len(window),
        workers=max((sum(p.role == "worker" for p in s.procs) for s in window), default=0),
        worker_cpu=_mean(per_worker),
        worker_cores=sum(p.cpu for p in workers) / 100 / n,
        main_cores=sum(p.cpu for s in window for p in s.procs if p.role == "main") / 100 / n,
        job_cores=sum(p.cpu for s in window for p in s.procs) / 100 / n,
        busy_cores=(fmean(s.host.cpu for s in window) / 100 * cores) if window else 0.0,
        cores=cores,
        iowait=_mean([s.host.iowait for s in window if s.host.iowait is not None]),
        steal=_mean([s.host.steal for s in window if s.host.steal is not None]),
        psi_cpu=_mean([s.host.psi_cpu for s in window if s.host.psi_cpu is not None]),
        dstate=(sum(p.state == "disk-sleep" for p in workers) / len(workers)) if workers else 0.0,
        runnable=(sum(p.state == "running" for p in workers) / len(workers)) if workers else 0.0,
        disk_read=fmean(disk) if disk else 0.0,
        disk_peak=max(disk, default=0.0),
        worker_growth=growth,
        worker_growth_s=growth_s,
        worker_first_uss=first_uss,
        shm_peak=max(shm) if shm else None,
        mem_available_min=min((s.host.mem_available / s.host.mem_total for s in run.samples), default=1.0),
        swap_growth=(run.samples[-1].host.swap_used - run.samples[0].host.swap_used) if run.samples else 0,
        gpu_util=_mean([float(g) for g in gpus]),
        worker_series=series,
    )


def totals(loaders: tuple[LoaderTotals, ...]) -> tuple[int, float, float]:
    """(batches, wait seconds, loop seconds) over every loader of every process."""
    return (
        sum(lt.batches for lt in loaders),
        sum(lt.wait_s for lt in loaders),
        sum(lt.loop_s for lt in loaders),
    )


@dataclass(frozen=True, slots=True)
class Interval:
    """One sample's interval: data-wait fraction and batches/s (from the hook's totals), host CPU (percent),
    the job's cores, GPU utilisation, disk reads."""

    t: float
    data_wait_fraction: float | None
    batches_per_s: float | None
    cpu: float
    job_cores: float
    gpu_util: float | None
    disk_read_mb_s: float


def timeline(run: WatchRun) -> tuple[Interval, ...]:
    """Per interval: data-wait fraction and batches/s (from the hook's totals), CPU, GPU util, disk MB/s."""
    rows: list[Interval] = []
    previous = (0, 0.0, 0.0)
    for sample in run.samples:
        batches, wait, loop = totals(sample.loaders)
        d_batches, d_wait, d_loop = batches - previous[0], wait - previous[1], loop - previous[2]
        previous = (batches, wait, loop)
        gpu = [g.utilization for g in sample.gpus if g.utilization is not None]
        rows.append(
            Interval(
                t=sample.t,
                data_wait_fraction=round(d_wait / d_loop, 4) if d_loop > 0 else None,
                batches_per_s=round(d_batches / d_loop, 3) if d_loop > 0 else None,
                cpu=round(sample.host.cpu, 1),
                job_cores=round(sum(p.cpu for p in sample.procs) / 100, 2),
                gpu_util=fmean(gpu) if gpu else None,
                disk_read_mb_s=round(sum(sample.host.disk_read.values()) / 1e6, 2),
            )
        )
    return tuple(rows)


@dataclass(frozen=True, slots=True)
class Summary:
    """What the verdicts read about a run: its figures, the loader the loop spent most time in (None without
    loader timing) and the totals over every loader, the CPUs, the hook and what the GPU sampling saw."""

    figures: Figures
    loader: LoaderTotals | None
    batches: int
    wait_s: float
    loop_s: float
    usable_cpus: int
    hook: HookStatus
    workers_seen: bool  # a DataLoader worker process was sampled
    gpus_sampled: bool
    gpu_used: bool  # a GPU ran one of the job's processes
    gpu_note: str  # why there is no GPU data
    loading: FetchTotals | None = None  # the batches produced for `loader`, summed over its processes
    spread: float | None = None  # the loop's rate over the intervals: ~2 standard errors over its mean


def spread(run: WatchRun) -> float | None:
    """How far the run's mean rate could be off from its variance over the sampled intervals (about two
    standard errors over the mean, relative); None with fewer than 4 intervals that ran batches."""
    rates = [row.batches_per_s for row in timeline(run) if row.batches_per_s]
    if len(rates) < 4:
        return None
    mean = fmean(rates)
    return round(2 * stdev(rates) / math.sqrt(len(rates)) / mean, 4) if mean > 0 else None


def dominant(loaders: tuple[LoaderTotals, ...]) -> LoaderTotals | None:
    """The loader the loop spent the most time in (the training loader, usually)."""
    return max(loaders, key=lambda lt: lt.loop_s, default=None)


def loading(fetches: tuple[FetchTotals, ...], loader: LoaderTotals | None) -> FetchTotals | None:
    """What producing `loader`'s batches cost, summed over the processes that did it: its workers (children of
    its process) or, at num_workers=0, its own process; None without a matching stream."""
    if loader is None:
        return None
    workers = loader.settings.workers > 0
    mine = [
        f
        for f in fetches
        if f.dataset == loader.settings.dataset
        and f.worker == workers
        and (f.ppid if workers else f.pid) == loader.pid
    ]
    if not mine:
        return None
    return FetchTotals(
        pid=loader.pid,
        ppid=mine[0].ppid,
        worker=workers,
        dataset=mine[0].dataset,
        batches=sum(f.batches for f in mine),
        wall_s=sum(f.wall_s for f in mine),
        cpu_s=sum(f.cpu_s for f in mine),
        delay_s=sum(f.delay_s for f in mine),
        walls=tuple(w for f in mine for w in f.walls),
        off_s=None if any(f.off_s is None for f in mine) else sum(f.off_s or 0.0 for f in mine),
    )


def summarize(run: WatchRun) -> Summary:
    """The run as the verdicts read it; the loader totals are the final ones, else the last sample's."""
    loaders = run.loaders or (run.samples[-1].loaders if run.samples else ())
    batches, wait, loop = totals(loaders)
    main = dominant(loaders)
    return Summary(
        figures=figures(run),
        loader=main,
        batches=batches,
        wait_s=wait,
        loop_s=loop,
        usable_cpus=run.usable_cpus,
        hook=run.hook,
        workers_seen=any(p.role == "worker" for s in run.samples for p in s.procs),
        gpus_sampled=any(s.gpus for s in run.samples),
        gpu_used=any(g.used_by_tree for s in run.samples for g in s.gpus),
        gpu_note=run.gpu_note,
        loading=loading(run.fetches, main),
        spread=spread(run),
    )


def _burstiness(walls: tuple[float, ...]) -> float | None:
    """The per-batch loading time's p95 over its median (None with fewer than 8 batches)."""
    if len(walls) < 8:
        return None
    ordered = sorted(walls)
    median = ordered[len(ordered) // 2]
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] / median if median > 0 else None


def _load_costs(summary: Summary, loader: LoaderTotals) -> tuple[float, float, float]:
    """(loading CPU, off-CPU wait, run-queue and hand-over wait) per batch: from the fetch streams (CPU clock
    and run-queue delay apart, so a busy machine does not look like I/O), else from what the loop and the
    process samples saw."""
    fetched, batches = summary.loading, loader.batches
    workers = loader.settings.workers
    if fetched is not None and fetched.batches >= 3:
        per = 1.0 / fetched.batches
        off = fetched.off_s if fetched.off_s is not None else fetched.wall_s - fetched.cpu_s - fetched.delay_s
        cpu, wait = fetched.cpu_s * per, max(0.0, off) * per
        delay = max(0.0, fetched.wall_s * per - cpu - wait)
        if workers and (loader.data_wait_fraction or 0.0) >= LANES_FULL:
            # the loop starved: each worker delivered a batch only every workers / rate seconds, however
            # quick its fetch; the rest (handing the batch over, waking up on a busy machine) is its cost too
            delay = max(delay, workers * loader.loop_s / batches - cpu - wait)
        return cpu, wait, delay
    if workers == 0:  # loading is what next() waits for, on the main process's clocks
        return loader.wait_cpu_s / batches, max(0.0, loader.wait_s - loader.wait_cpu_s) / batches, 0.0
    rate = batches / loader.loop_s
    cpu = summary.figures.worker_cores / rate  # workers' CPU per batch from the process samples
    wall = workers / rate if loader.data_wait_fraction else cpu  # input-bound: lanes full
    return cpu, max(0.0, wall - cpu), 0.0


def _others(summary: Summary, workers: int, load_cpu: float, load_wait: float) -> float:
    """Other processes competing for the cores, as runnable processes: from the share of a core CPU-bound
    loading got while it was runnable (its run-queue delay) on a saturated machine, else the cores they
    used."""
    fig, fetched = summary.figures, summary.loading
    others = max(0.0, fig.busy_cores - fig.job_cores)
    busy = load_cpu / (load_cpu + load_wait) if load_cpu + load_wait > 0 else 0.0
    # a loader that mostly sleeps waits for a core at each wake-up: its share says little about the others
    cpu_bound = fetched is not None and fetched.cpu_s > 0 and busy >= 0.5
    share = fetched.cpu_s / (fetched.cpu_s + fetched.delay_s) if fetched and cpu_bound else None
    runnable = max(fig.main_cores, 0.1) + workers * busy
    return others_from_share(summary.usable_cpus, others, share, runnable, visible=fig.cores)


def pipeline_of(summary: Summary) -> Pipeline | None:
    """The run's dominant loader as the input-pipeline model reads it; None without loader timing."""
    loader = summary.loader
    if loader is None or loader.batches == 0 or loader.loop_s <= 0:
        return None
    batches, workers = loader.batches, loader.settings.workers
    load_cpu, load_wait, load_delay = _load_costs(summary, loader)
    epochs = max(loader.epochs, 1)
    first = loader.startup_s / epochs  # each epoch's first batch: start-up plus producing one batch
    startup = (
        max(0.0, first - load_cpu - load_wait - load_delay)
        if workers and not loader.settings.persistent_workers
        else None
    )
    settings = loader.settings
    return Pipeline(
        costs=BatchCosts(
            load_cpu=load_cpu,
            load_wait=load_wait,
            load_delay=load_delay,
            step_wall=loader.step_s / batches,
            step_cpu=loader.step_cpu_s / batches,
            step_delay=loader.step_delay_s / batches,
            # at num_workers=0 nothing is handed over: workers would add what receiving costs elsewhere
            receive_cpu=loader.wait_cpu_s / batches if workers else RECEIVE_S,
        ),
        cores=Cores(summary.usable_cpus, _others(summary, workers, load_cpu, load_wait)),
        current=Setting(
            num_workers=workers,
            prefetch_factor=settings.prefetch_factor if workers else None,
            persistent_workers=settings.persistent_workers,
            pin_memory=settings.pin_memory,
        ),
        measured_rate=batches / loader.loop_s,
        accelerator=summary.gpu_used,
        startup_s=startup,
        epoch_batches=batches // epochs if loader.epochs else None,
        burstiness=_burstiness(summary.loading.walls) if summary.loading else None,
        step_threads=settings.threads,
        data_wait=loader.data_wait_fraction,
        spread=summary.spread,
    )
