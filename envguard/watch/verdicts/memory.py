"""Watch's verdicts on memory (pure, over the run's Summary): a worker whose memory grows (copy-on-read),
/dev/shm filling, RAM running out."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.output import human_bytes
from envguard.watch.summary import Figures, MiB, Summary

GROWTH_BYTES = 64 * MiB
GROWTH_SHARE = 0.2
SHM_FULL = 0.8
RAM_LOW = 0.1


EARLY_S = 3.0  # a worker's USS within this long of its first sample: the copy-on-write jump after fork
SUSTAINED = 0.25  # growth after EARLY_S above this share of the whole growth: growth that goes on


def _series(points: tuple[tuple[float, int], ...]) -> str:
    """Up to six points of a USS series, as `19.0 MiB at 0 s, ...`, the first and last always shown."""
    if len(points) > 6:
        step = (len(points) - 1) / 5
        points = tuple(points[round(i * step)] for i in range(6))
    return ", ".join(f"{human_bytes(uss)} at {t:g} s" for t, uss in points)


def _growth_finding(fig: Figures) -> Finding:
    """A one-off jump right after the worker started (copy-on-write of the parent's pages as they are
    touched) is told apart from growth that goes on (copy-on-read of Python objects, a cache): the first is
    paid once per worker, the second grows with the epoch."""
    points = fig.worker_series
    since, start = next(((t, uss) for t, uss in reversed(points) if t <= EARLY_S), (0.0, 0))
    later = (points[-1][1] - start) if points else 0
    cited = f"the worker's USS: {_series(points)}" if points else ""
    if points and points[-1][0] > EARLY_S and later <= SUSTAINED * fig.worker_growth:
        jump = start - points[0][1]
        return Finding(
            "memory",
            "worker memory after fork",
            "INFO",
            f"a one-off jump of {human_bytes(jump)} within {EARLY_S:g} s of the worker's start, then flat "
            f"(+{human_bytes(max(later, 0))} over {points[-1][0] - since:.0f} s): copy-on-write of the "
            f"parent's pages, paid once per worker; {cited}",
            "call gc.freeze() after building the dataset and before the DataLoader starts its workers (the "
            "collector then leaves the shared pages alone), keep the parent small before iterating (load the "
            "model after the loader's workers start), or DataLoader(multiprocessing_context='forkserver')",
        )
    span = max(points[-1][0] - since, 1e-9) if points else max(fig.worker_growth_s, 1e-9)
    per_min = (later if points else fig.worker_growth) / span * 60
    return Finding(
        "memory",
        "worker memory growth",
        "WARN",
        f"a worker's USS grew {human_bytes(fig.worker_growth)} (from {human_bytes(fig.worker_first_uss)}) "
        f"and went on growing after its first {EARLY_S:g} s ({human_bytes(per_min)}/min); {cited}",
        "copy-on-read (pytorch#13246): hold the dataset's Python lists/dicts as numpy arrays or Arrow "
        "tables (or one bytes buffer); check for caches that grow per sample",
    )


def memory_findings(summary: Summary) -> list[Finding]:
    fig = summary.figures
    out: list[Finding] = []
    if fig.worker_growth >= GROWTH_BYTES and fig.worker_growth >= GROWTH_SHARE * fig.worker_first_uss:
        out.append(_growth_finding(fig))
    elif summary.workers_seen:
        out.append(
            Finding(
                "memory",
                "worker memory growth",
                "PASS",
                f"largest worker USS growth {human_bytes(fig.worker_growth)}",
            )
        )
    if fig.shm_peak is not None and fig.shm_peak >= SHM_FULL:
        out.append(
            Finding(
                "memory",
                "/dev/shm",
                "WARN",
                f"/dev/shm {fig.shm_peak:.0%} full at its peak",
                "enlarge it (docker --shm-size) or lower num_workers x prefetch_factor",
            )
        )
    if fig.mem_available_min < RAM_LOW or fig.swap_growth > 64 * MiB:
        out.append(
            Finding(
                "memory",
                "RAM",
                "WARN",
                f"available RAM fell to {fig.mem_available_min:.0%}; "
                f"swap grew {human_bytes(fig.swap_growth)}",
                "fewer workers or a smaller prefetch_factor; fix growing workers first",
            )
        )
    return out
