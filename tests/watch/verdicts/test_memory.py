"""Watch's memory verdicts over hand-built summaries: growing workers, /dev/shm, RAM and swap."""

from __future__ import annotations

from envguard.watch.verdicts.memory import memory_findings
from tests.watch.helpers import figures, summary

MiB = 2**20


def test_growth_that_goes_on_is_copy_on_read_and_cites_its_series() -> None:
    series = tuple((float(t), (100 + 3 * t) * MiB) for t in range(0, 61, 5))  # +3 MiB every second
    fig = figures(
        worker_growth=180 * MiB, worker_growth_s=60.0, worker_first_uss=100 * MiB, worker_series=series
    )
    (found,) = memory_findings(summary(figures=fig))
    assert (found.check, found.status) == ("worker memory growth", "WARN")
    assert "went on growing after its first 3 s (180.0 MiB/min)" in found.evidence
    assert "100.0 MiB at 0 s" in found.evidence and "280.0 MiB at 60 s" in found.evidence
    assert "pytorch#13246" in found.fix and "numpy arrays or Arrow" in found.fix


def test_a_one_off_jump_after_fork_is_copy_on_write() -> None:
    # 298 MiB within 2 s of the worker's start, flat for the 12 s after: not a rate of 1.2 GiB/min
    flat = tuple((float(t), 318 * MiB + t * 2**16) for t in range(3, 15))
    series = ((0.0, 20 * MiB), (1.0, 150 * MiB), (2.0, 318 * MiB), *flat)
    fig = figures(
        worker_growth=299 * MiB, worker_growth_s=14.0, worker_first_uss=20 * MiB, worker_series=series
    )
    (found,) = memory_findings(summary(figures=fig))
    assert (found.check, found.status) == ("worker memory after fork", "INFO")
    assert "a one-off jump of 298.2 MiB within 3 s of the worker's start, then flat" in found.evidence
    assert "/min" not in found.evidence
    assert "gc.freeze()" in found.fix and "forkserver" in found.fix and "numpy" not in found.fix


def test_growth_small_against_the_worker_is_stable() -> None:
    fig = figures(worker_growth=100 * MiB, worker_first_uss=1024 * MiB)  # under a fifth of its size
    assert [f.status for f in memory_findings(summary(figures=fig))] == ["PASS"]
    assert memory_findings(summary(figures=fig, workers_seen=False)) == []


def test_shm_and_ram() -> None:
    found = memory_findings(summary(figures=figures(shm_peak=0.9, mem_available_min=0.05)))
    assert [(f.check, f.status) for f in found] == [
        ("worker memory growth", "PASS"),
        ("/dev/shm", "WARN"),
        ("RAM", "WARN"),
    ]
    swapping = memory_findings(summary(figures=figures(swap_growth=128 * MiB)))
    assert swapping[-1].check == "RAM" and "swap grew 128.0 MiB" in swapping[-1].evidence
