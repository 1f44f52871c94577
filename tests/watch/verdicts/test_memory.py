"""Watch's memory verdicts over hand-built summaries: growing workers, /dev/shm, RAM and swap."""

from __future__ import annotations

from envguard.watch.verdicts.memory import memory_findings
from tests.watch.helpers import figures, summary

MiB = 2**20


def test_a_growing_worker_is_copy_on_read() -> None:
    fig = figures(worker_growth=200 * MiB, worker_growth_s=60.0, worker_first_uss=100 * MiB)
    (found,) = memory_findings(summary(figures=fig))
    assert found.status == "WARN" and "200.0 MiB in 60.0 s" in found.evidence and "pytorch#13246" in found.fix


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
