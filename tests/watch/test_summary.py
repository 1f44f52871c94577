"""A run reduced to its summary over hand-built samples: the steady window, the workers' CPU and memory
growth, the host, the dominant loader with the totals, the GPUs, and the per-interval timeline."""

from __future__ import annotations

import pytest

from envguard.watch.records import HookStatus, ProcSample
from envguard.watch.summary import dominant, figures, steady, summarize, timeline
from tests.watch.helpers import gpu, loader, proc, run, sample


def tree(worker_cpu: float, worker_uss: int) -> tuple[ProcSample, ...]:
    return (proc(10, 1, "main", 50.0), proc(11, 10, "worker", worker_cpu, uss=worker_uss))


def test_the_steady_window_is_where_batches_flowed() -> None:
    samples = (
        sample(1.0, tree(5.0, 100), (loader(0, 0.0, 0.0),)),
        sample(2.0, tree(90.0, 100), (loader(10, 1.0, 1.0),)),
        sample(3.0, tree(90.0, 100), (loader(10, 1.0, 1.0),)),  # a pause: not steady
        sample(4.0, tree(70.0, 100), (loader(20, 2.0, 2.0),)),
    )
    assert [s.t for s in steady(samples)] == [2.0, 4.0]
    fig = figures(run(samples))
    assert fig.window == 2 and fig.workers == 1
    assert fig.worker_cpu == pytest.approx(80.0) and fig.main_cores == pytest.approx(0.5)
    assert fig.job_cores == pytest.approx(1.3) and fig.busy_cores == pytest.approx(1.0)  # 50% of 2 cores


def test_without_batches_every_sample_but_the_first_counts() -> None:
    samples = tuple(sample(float(t), tree(10.0, 100)) for t in range(1, 5))
    assert [s.t for s in steady(samples)] == [2.0, 3.0, 4.0]


def test_worker_memory_growth_shm_ram_and_swap() -> None:
    samples = (
        sample(1.0, tree(10.0, 100 * 2**20), swap_used=0, shm_used=2**29),
        sample(5.0, tree(10.0, 300 * 2**20), swap_used=2**30, mem_available=2**30),
    )
    fig = figures(run(samples))
    assert (fig.worker_growth, fig.worker_growth_s, fig.worker_first_uss) == (200 * 2**20, 4.0, 100 * 2**20)
    assert fig.shm_peak == pytest.approx(0.5) and fig.swap_growth == 2**30
    assert fig.mem_available_min == pytest.approx(1 / 16)


def test_gpu_utilisation_counts_the_jobs_gpus() -> None:
    samples = (
        sample(1.0, gpus=(gpu(90, True), gpu(10, False))),
        sample(2.0, gpus=(gpu(70, True), gpu(10, False))),
    )
    assert figures(run(samples)).gpu_util == pytest.approx(70.0)  # the window skips the first sample


def test_summary_takes_the_dominant_loader_and_totals_over_all() -> None:
    train, val = loader(100, 3.0, 7.0, id=0), loader(10, 0.5, 0.5, id=1)
    samples = (sample(1.0, tree(10.0, 100), gpus=(gpu(50, True),)), sample(2.0, tree(10.0, 100)))
    summary = summarize(run(samples, loaders=(val, train), hook=HookStatus("active", ("pid 10: x",))))
    assert dominant((val, train)) == train and summary.loader == train
    assert (summary.batches, summary.wait_s, summary.loop_s) == (110, 3.5, 11.0)
    assert summary.workers_seen and summary.gpus_sampled and summary.gpu_used
    assert summary.hook.errors == ("pid 10: x",)


def test_without_final_totals_the_last_samples_count() -> None:
    samples = (sample(1.0, loaders=(loader(5, 1.0, 1.0),)), sample(2.0, loaders=(loader(9, 2.0, 2.0),)))
    summary = summarize(run(samples, loaders=()))
    assert summary.batches == 9 and not summary.workers_seen and not summary.gpus_sampled


def test_timeline_per_interval() -> None:
    samples = (
        sample(1.0, tree(50.0, 100), (loader(10, 1.0, 3.0),), disk_read={"sda": 2e6}),
        sample(2.0, tree(50.0, 100), (loader(30, 3.0, 5.0),)),
        sample(3.0, tree(50.0, 100), (loader(30, 3.0, 5.0),)),
    )
    rows = timeline(run(samples))
    assert [(r.data_wait_fraction, r.batches_per_s) for r in rows] == [(0.25, 2.5), (0.5, 5.0), (None, None)]
    assert rows[0].job_cores == 1.0 and rows[0].disk_read_mb_s == 2.0 and rows[0].gpu_util is None
