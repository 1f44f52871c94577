"""Watch's input-pipeline verdict over hand-built summaries: each cause with its advice and expected gain,
the thresholds, and the runs it declines to judge."""

from __future__ import annotations

from typing import Literal

import pytest

from envguard.pipeline.costs import Setting
from envguard.watch.records import FetchTotals, HookStatus
from envguard.watch.verdicts.pipeline import pipeline_diagnosis
from tests.watch.helpers import figures, loader, summary

# 100 batches: 6 s waiting for data, 4 s of steps (a 60% data wait; the steps alone would give 25/s)
STARVED = loader(100, 6.0, 4.0, workers=2, wait_cpu_s=0.1, step_cpu_s=0.4)


def fetched(
    batches: int, wall_s: float, cpu_s: float, delay_s: float = 0.0, worker: bool = True
) -> FetchTotals:
    """What the loading processes reported for the loader of pid 10 (its workers, or itself)."""
    return FetchTotals(10, 1, worker, "Images", batches, wall_s, cpu_s, delay_s)


def test_cpu_bound_workers_with_spare_cores_get_the_count_that_feeds_the_step() -> None:
    fig = figures(worker_cpu=95.0, job_cores=2.2, busy_cores=2.5, main_cores=0.2, cores=8)
    found = pipeline_diagnosis(summary(STARVED, figures=fig, usable_cpus=8, loading=fetched(100, 20.0, 19.0)))
    assert (found.verdict, found.cause) == ("input-bound", "cpu")
    advice = found.recommendation
    assert advice is not None and advice.rule == "spare-cores"
    # 0.2 s per batch per worker: 5 workers feed the 24/s the steps allow, in one step (not 2 -> 3 -> ...);
    # past 4 the counts advised are 6, 8, 12, ... (so two measurements a few percent apart agree)
    assert (advice.setting, advice.value) == ("num_workers", 6)
    assert advice.expected_speedup == pytest.approx(2.44, abs=0.02)
    assert advice.predicted_batches_per_s == pytest.approx(24.4, abs=0.2)
    assert advice.dataloader.startswith("DataLoader(num_workers=6, prefetch_factor=2")
    assert found.findings[0].status == "FAIL" and found.findings[0].check == "input-bound: CPU-bound workers"
    assert found.data_wait_fraction == 0.6 and found.batches_per_s == 10.0
    assert found.pipeline is not None and found.pipeline.costs.load_cpu == pytest.approx(0.19)


def test_cpu_bound_workers_on_every_core_get_cheaper_batches() -> None:
    fig = figures(worker_cpu=95.0, job_cores=2.0, busy_cores=2.0, main_cores=0.1)
    found = pipeline_diagnosis(summary(STARVED, figures=fig, usable_cpus=2, loading=fetched(100, 20, 19)))
    assert found.cause == "all-cores-busy" and found.recommendation is not None
    assert found.recommendation.setting == "augmentation" and found.recommendation.value is None
    assert "the job's cores are busy with loading and the step" in found.recommendation.text


def test_workers_waiting_on_the_disk_get_storage_advice() -> None:
    fig = figures(worker_cpu=10.0, iowait=30.0, dstate=0.4, disk_read=80e6, disk_peak=120e6)
    found = pipeline_diagnosis(summary(loader(100, 6.0, 4.0, workers=4), figures=fig))
    assert found.cause == "io" and found.recommendation is not None
    assert found.recommendation.setting == "storage" and "iowait 30%" in found.recommendation.text
    assert found.recommendation.rule == "disk"


def test_workers_waiting_off_cpu_without_iowait_get_enough_workers_to_overlap_the_waits() -> None:
    # each batch: 1 ms of CPU and 199 ms asleep in the worker; the run-queue wait is not counted as a wait
    loading = fetched(100, 20.0 + 3.0, 0.1, delay_s=3.0)
    found = pipeline_diagnosis(summary(STARVED, figures=figures(worker_cpu=5.0), loading=loading))
    assert found.cause == "latency" and found.recommendation is not None
    # 230 ms per batch per worker (199 ms asleep, 30 ms waiting for a core): 6 workers feed the 24/s steps
    assert found.recommendation.value == 6
    assert found.recommendation.expected_speedup == pytest.approx(2.44, abs=0.02)
    assert "waiting for a core 30.0 ms" in found.recommendation.text


def test_loading_in_the_main_process_gets_workers() -> None:
    in_main = loader(100, 6.0, 4.0, workers=0, wait_cpu_s=0.3, step_cpu_s=0.2)
    found = pipeline_diagnosis(summary(in_main, figures=figures(workers=0)))
    assert found.cause == "in-main" and found.recommendation is not None
    assert found.recommendation.value == 2 and "(from 0)" in found.recommendation.text
    # 10/s -> the 25/s steps, less receiving each batch from a worker (1 ms, not measured at num_workers=0)
    assert found.recommendation.expected_speedup == pytest.approx(2.44, abs=0.02)


def test_a_cpu_step_on_every_core_is_not_given_workers() -> None:
    # imagenet on 2 cores: 216 ms steps on both cores, 43 ms of CPU loading per batch in the main process
    imagenet = loader(100, 4.3, 21.6, workers=0, wait_cpu_s=4.1, step_cpu_s=41.0)
    found = pipeline_diagnosis(summary(imagenet, figures=figures(workers=0, job_cores=2.0, busy_cores=2.0)))
    assert found.cause == "compete" and found.recommendation is not None
    assert found.recommendation.setting == "keep" and found.recommendation.value is None
    assert found.recommendation.rule == "compete" and found.recommendation.expected_speedup == 1.0
    assert "compete for the same cores" in found.recommendation.text
    assert "216.0 ms step using 1.9 cores" in found.recommendation.text


def test_a_smaller_wait_is_a_warning() -> None:
    found = pipeline_diagnosis(summary(loader(100, 2.0, 8.0), figures=figures(worker_cpu=5.0)))
    assert found.verdict == "input-bound" and found.findings[0].status == "WARN"


def test_a_loop_that_rarely_waits_is_not_input_bound() -> None:
    kept = Setting(num_workers=2, persistent_workers=True, batch_size=4, dataset="Images")
    found = pipeline_diagnosis(summary(loader(100, 0.5, 9.5, settings=kept), figures=figures(gpu_util=97.0)))
    assert found.verdict == "not input-bound" and found.recommendation is None
    assert found.headline.endswith("GPU 97% busy; nothing to fix in the input pipeline")
    assert found.findings[0].status == "PASS"
    # the same loop restarting its workers every epoch (0.3 s each) is told so, not input-bound or not
    restarts = pipeline_diagnosis(summary(loader(100, 0.5, 9.5), figures=figures(gpu_util=97.0)))
    assert restarts.recommendation is not None and restarts.recommendation.setting == "keep"
    assert "persistent_workers=True" in (restarts.recommendation.dataloader or "")


def test_a_loop_that_rarely_waits_with_more_workers_than_it_needs_is_told_the_fewer() -> None:
    """bench_pipeline_advice's tuned pipeline: 2 JPEG workers beside a 150 ms step, 3% data wait. Watch said
    "nothing to fix" and smoke (the same model) num_workers=1; measured, 1 and 2 are equal (6.40 and 6.34
    batches/s). Watch now gives the fewer workers too, with the model's rate."""
    tuned = loader(100, 0.45, 15.0, workers=2, wait_cpu_s=0.05, step_cpu_s=0.1)
    found = pipeline_diagnosis(
        summary(tuned, figures=figures(worker_cpu=6.0), loading=fetched(100, 1.0, 0.9))
    )
    assert found.verdict == "not input-bound" and found.findings[0].status == "PASS"
    advice = found.recommendation
    assert advice is not None and advice.rule == "fewer-workers"
    assert (advice.setting, advice.value) == ("num_workers", 1)
    assert advice.expected_speedup == pytest.approx(1.0, abs=0.03)
    assert found.headline.endswith("num_workers=1 (from 2) does as well")
    assert found.findings[0].fix.startswith("num_workers=1 (from 2): ")


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


def test_a_step_whose_threads_outnumber_its_cores_is_given_fewer_threads_before_any_workers() -> None:
    """imagenet beside another user's process spinning on one of 2 cores: a 366 ms step on its 2 threads,
    loading in the main process. Watch said "compete, keep num_workers=0" (or, in other runs, 1 worker
    predicted 1.05x, measured 1.59x): costs measured while the step's threads wait on each other. Applied,
    torch.set_num_threads(1) ran 1.5-1.7x the best num_workers of the sweep, and watch on the job with 1
    thread then judged the workers."""
    settings = Setting(num_workers=0, pin_memory=False, batch_size=8, dataset="Dummy", threads=2)
    imagenet = loader(30, 1.8, 11.0, workers=0, wait_cpu_s=1.0, step_cpu_s=10.9, settings=settings)
    busy = figures(workers=0, job_cores=1.0, busy_cores=2.0, main_cores=1.0)
    found = pipeline_diagnosis(summary(imagenet, figures=busy))
    assert found.cause == "threads" and found.recommendation is not None, found
    advice = found.recommendation
    assert (advice.setting, advice.value, advice.rule) == ("threads", 1, "threads")
    assert advice.expected_speedup is None  # not predicted: measured by running watch again
    assert advice.text.startswith("torch.set_num_threads(1) (from 2) first: the step runs torch's 2")
    assert advice.dataloader == "DataLoader(num_workers=0, pin_memory=False)"
    one = Setting(num_workers=0, pin_memory=False, batch_size=8, dataset="Dummy", threads=1)
    single = loader(30, 1.8, 11.0, workers=0, wait_cpu_s=1.0, step_cpu_s=10.9, settings=one)
    assert pipeline_diagnosis(summary(single, figures=busy)).cause != "threads"


def test_other_tenants_on_cores_the_job_cannot_use_do_not_make_its_threads_too_many() -> None:
    """A container with a 2-CPU quota on an 8-core host where other tenants keep 5 cores busy: the host has
    6 cores beside the job's 2, so none of that load takes the job's share. Read as 5 processes competing
    for its 2 usable cores, the model gave the job 0.6 of a core and said torch.set_num_threads(1)."""
    settings = Setting(num_workers=0, pin_memory=False, batch_size=8, dataset="Dummy", threads=2)
    imagenet = loader(30, 1.8, 11.0, workers=0, wait_cpu_s=1.0, step_cpu_s=21.0, settings=settings)
    host = figures(workers=0, job_cores=2.0, busy_cores=7.0, main_cores=2.0, cores=8)
    found = pipeline_diagnosis(summary(imagenet, figures=host))
    assert found.cause != "threads", found
    # the same load on a 2-core host that is all the job's: 5 other processes do compete for its cores
    small = figures(workers=0, job_cores=1.0, busy_cores=2.0, main_cores=1.0, cores=2)
    assert pipeline_diagnosis(summary(imagenet, figures=small)).cause == "threads"


def test_a_slow_step_is_judged_on_wall_time_not_a_batch_count() -> None:
    # a 5 s step: 3 batches after the first take 15 s, within a minute of watching
    slow = loader(3, 0.3, 15.0, workers=0, wait_cpu_s=0.3, step_cpu_s=15.0)
    found = pipeline_diagnosis(summary(slow))
    assert found.verdict != "too short to judge", found.headline
    assert pipeline_diagnosis(summary(loader(2, 0.2, 10.0, workers=0))).verdict == "too short to judge"


def test_receiving_a_batch_costs_the_main_process_at_every_worker_count() -> None:
    from envguard.pipeline import RECEIVE_S
    from envguard.watch.summary import pipeline_of

    in_main = pipeline_of(summary(loader(100, 6.0, 4.0, workers=0, wait_cpu_s=0.3, step_cpu_s=0.2)))
    assert in_main is not None and in_main.costs.receive_cpu == RECEIVE_S


def test_a_side_note_is_given_when_the_loop_does_not_wait_too() -> None:
    pinned = Setting(num_workers=2, prefetch_factor=2, pin_memory=True, batch_size=4, dataset="Images")
    quick = loader(100, 0.2, 10.0, workers=2, wait_cpu_s=0.05, step_cpu_s=0.1, settings=pinned)
    found = pipeline_diagnosis(summary(quick, loading=fetched(100, 2.0, 1.9)))
    assert found.verdict == "not input-bound" and found.recommendation is not None
    assert "pin_memory=True does nothing without an accelerator" in found.recommendation.text
    assert "pin_memory=False" in (found.recommendation.dataloader or "")
