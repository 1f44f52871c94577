"""Reduce a WatchRun to what the verdicts and the views cite (pure): the figures over its steady window, the
loader it spent its time in with the totals over every loader, and the per-interval timeline."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from statistics import fmean

from envguard.watch.records import HookStatus, LoaderTotals, Sample, WatchRun

MiB = 1024 * 1024


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


def steady(samples: tuple[Sample, ...]) -> list[Sample]:
    """Samples in which the loaders' batch count grew since the previous sample."""
    out: list[Sample] = []
    for before, after in itertools.pairwise(samples):
        if sum(lt.batches for lt in after.loaders) > sum(lt.batches for lt in before.loaders):
            out.append(after)
    return out or list(samples[1:]) or list(samples)


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def _growth(samples: tuple[Sample, ...]) -> tuple[float, float, float]:
    """(largest USS growth of one worker, over seconds, its first USS)."""
    first: dict[int, tuple[float, int]] = {}
    best = (0.0, 0.0, 0.0)
    for sample in samples:
        for proc in sample.procs:
            if proc.role != "worker" or proc.uss is None:
                continue
            t0, uss0 = first.setdefault(proc.pid, (sample.t, proc.uss))
            if proc.uss - uss0 > best[0]:
                best = (float(proc.uss - uss0), sample.t - t0, float(uss0))
    return best


def figures(run: WatchRun) -> Figures:
    window = steady(run.samples)
    per_worker = [p.cpu for s in window for p in s.procs if p.role == "worker"]
    workers = [p for s in window for p in s.procs if p.role == "worker"]
    n = len(window) or 1
    cores = max((len(s.host.per_core) for s in window), default=run.usable_cpus) or run.usable_cpus
    growth, growth_s, first_uss = _growth(run.samples)
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


def dominant(loaders: tuple[LoaderTotals, ...]) -> LoaderTotals | None:
    """The loader the loop spent the most time in (the training loader, usually)."""
    return max(loaders, key=lambda lt: lt.loop_s, default=None)


def summarize(run: WatchRun) -> Summary:
    """The run as the verdicts read it; the loader totals are the final ones, else the last sample's."""
    loaders = run.loaders or (run.samples[-1].loaders if run.samples else ())
    batches, wait, loop = totals(loaders)
    return Summary(
        figures=figures(run),
        loader=dominant(loaders),
        batches=batches,
        wait_s=wait,
        loop_s=loop,
        usable_cpus=run.usable_cpus,
        hook=run.hook,
        workers_seen=any(p.role == "worker" for s in run.samples for p in s.procs),
        gpus_sampled=any(s.gpus for s in run.samples),
        gpu_used=any(g.used_by_tree for s in run.samples for g in s.gpus),
        gpu_note=run.gpu_note,
    )
