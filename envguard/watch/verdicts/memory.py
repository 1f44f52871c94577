"""Watch's verdicts on memory (pure, over the run's Summary): a worker whose memory grows (copy-on-read),
/dev/shm filling, RAM running out."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.output import human_bytes
from envguard.watch.summary import MiB, Summary

GROWTH_BYTES = 64 * MiB
GROWTH_SHARE = 0.2
SHM_FULL = 0.8
RAM_LOW = 0.1


def memory_findings(summary: Summary) -> list[Finding]:
    fig = summary.figures
    out: list[Finding] = []
    if fig.worker_growth >= GROWTH_BYTES and fig.worker_growth >= GROWTH_SHARE * fig.worker_first_uss:
        per_min = fig.worker_growth / max(fig.worker_growth_s, 1e-9) * 60
        out.append(
            Finding(
                "memory",
                "worker memory growth",
                "WARN",
                f"a worker's USS grew {human_bytes(fig.worker_growth)} in {fig.worker_growth_s:.1f} s "
                f"(from {human_bytes(fig.worker_first_uss)}, {human_bytes(per_min)}/min)",
                "copy-on-read (pytorch#13246): hold the dataset's Python lists/dicts as numpy arrays or one "
                "bytes "
                "buffer; check for caches that grow per sample",
            )
        )
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
