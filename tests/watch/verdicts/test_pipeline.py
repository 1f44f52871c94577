"""Watch's input-pipeline verdict over hand-built summaries: each cause with its advice and expected gain,
the thresholds, and the runs it declines to judge."""

from __future__ import annotations

from typing import Literal

import pytest

from envguard.watch.records import HookStatus
from envguard.watch.verdicts.pipeline import fair_share_speedup, pipeline_diagnosis
from tests.watch.helpers import figures, loader, summary

# 100 batches: 6 s waiting for data, 4 s of steps (a 60% data wait; the steps alone would give 25/s)
STARVED = loader(100, 6.0, 4.0, workers=2)


def test_fair_share_speedup_stays_within_its_physical_bounds() -> None:
    assert fair_share_speedup(1, 2, 1.0, 0.0, 0.0, 2) == pytest.approx(2.0)
    assert fair_share_speedup(1, 2, 1.0, 0.1, 0.0, 2) == pytest.approx(2 * 2 / 2.1)
    for share in (0.3, 0.5, 0.8, 1.0):
        for others in (0.0, 0.5, 1.5, 3.0):
            value = fair_share_speedup(2, 4, share, 0.05, others, 4)
            assert 1.0 <= value <= 4 / 2 / share + 1e-9  # never above k workers each given a full core


def test_cpu_bound_workers_with_spare_cores_get_more_workers() -> None:
    fig = figures(worker_cpu=95.0, job_cores=2.2, busy_cores=2.5, main_cores=0.2, cores=8)
    found = pipeline_diagnosis(summary(STARVED, figures=fig, usable_cpus=8))
    assert (found.verdict, found.cause) == ("input-bound", "cpu")
    assert found.recommendation is not None
    # 5 workers feed the 25/s the steps allow; capped there, not at the 2.6x that 5 full cores would give
    assert (found.recommendation.setting, found.recommendation.value) == ("num_workers", 5)
    assert found.recommendation.expected_speedup == pytest.approx(2.5)
    assert found.findings[0].status == "FAIL" and found.findings[0].check == "input-bound: CPU-bound workers"
    assert found.data_wait_fraction == 0.6 and found.batches_per_s == 10.0


def test_cpu_bound_workers_on_every_core_get_cheaper_batches() -> None:
    fig = figures(worker_cpu=95.0, job_cores=2.0, busy_cores=2.0, main_cores=0.1)
    found = pipeline_diagnosis(summary(STARVED, figures=fig, usable_cpus=2))
    assert found.cause == "all-cores-busy" and found.recommendation is not None
    assert found.recommendation.setting == "augmentation" and found.recommendation.value is None
    assert "the job already uses 2.0 of 2 cores" in found.recommendation.text


def test_workers_waiting_on_the_disk_get_storage_advice() -> None:
    fig = figures(worker_cpu=10.0, iowait=30.0, dstate=0.4, disk_read=80e6, disk_peak=120e6)
    found = pipeline_diagnosis(summary(loader(100, 6.0, 4.0, workers=4), figures=fig))
    assert found.cause == "io" and found.recommendation is not None
    assert found.recommendation.setting == "storage" and "iowait 30%" in found.recommendation.text


def test_workers_waiting_off_cpu_without_iowait_get_more_workers() -> None:
    found = pipeline_diagnosis(summary(STARVED, figures=figures(worker_cpu=5.0)))
    assert found.cause == "latency" and found.recommendation is not None
    assert found.recommendation.value == 5  # 2 x min(2.5 consumer/producer, 2.2 cores left)
    assert found.recommendation.expected_speedup == pytest.approx(2 / 0.9, abs=1e-3)


def test_loading_in_the_main_process_gets_workers() -> None:
    found = pipeline_diagnosis(summary(loader(100, 6.0, 4.0, workers=0), figures=figures(workers=0)))
    assert found.cause == "in-main" and found.recommendation is not None
    assert found.recommendation.value == 1 and "(from 0)" in found.recommendation.text
    assert found.recommendation.expected_speedup == pytest.approx(10 / 6, abs=1e-3)  # 10/s -> 1/60 ms


def test_a_smaller_wait_is_a_warning() -> None:
    found = pipeline_diagnosis(summary(loader(100, 2.0, 8.0), figures=figures(worker_cpu=5.0)))
    assert found.verdict == "input-bound" and found.findings[0].status == "WARN"


def test_a_loop_that_rarely_waits_is_not_input_bound() -> None:
    found = pipeline_diagnosis(summary(loader(100, 0.5, 9.5), figures=figures(gpu_util=97.0)))
    assert found.verdict == "not input-bound" and found.recommendation is None
    assert found.headline.endswith("GPU 97% busy; nothing to fix in the input pipeline")
    assert found.findings[0].status == "PASS"


def test_a_short_run_is_not_judged() -> None:
    found = pipeline_diagnosis(summary(loader(10, 1.0, 1.0)))
    assert found.verdict == "too short to judge" and found.findings[0].status == "INFO"
    assert found.findings[0].fix == "watch a longer stretch of training"


@pytest.mark.parametrize(
    ("state", "why"),
    [("off", "hook was off"), ("no-loader", "no torch DataLoader"), ("active", "no loader data")],
)
def test_without_loader_timing_it_says_why(state: Literal["off", "no-loader", "active"], why: str) -> None:
    found = pipeline_diagnosis(summary(None, hook=HookStatus(state)))
    assert found.verdict == "no loader timing" and why in found.headline
    assert found.data_wait_fraction is None and found.recommendation is None
