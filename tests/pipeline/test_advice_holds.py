"""Issue 40: where the model misread real training code (pytorch/examples mnist and imagenet, an I/O-waiting
Dataset, a slow step) on a busy 2-core machine, each case as the measured records gave it."""

from __future__ import annotations

import pytest

from envguard.pipeline.costs import BatchCosts, Cores, Pipeline, Setting
from envguard.pipeline.model import advise, rate, step_threads

# mnist/main.py on 2 intra-op threads beside other busy processes: the step kept 0.3 cores busy (its threads
# waited for each other) while its main thread waited for a core half the step; 1 thread ran 1.9x faster
MNIST_BUSY = Pipeline(
    BatchCosts(load_cpu=0.002, load_wait=0.0, step_wall=0.050, step_cpu=0.015, step_delay=0.025),
    Cores(usable=2, others=2.0),
    Setting(num_workers=1, prefetch_factor=2),
    measured_rate=18.0,
    step_threads=2,
)


def test_a_cpu_step_starved_on_a_busy_host_gets_the_thread_advice() -> None:
    assert MNIST_BUSY.costs.step_cores < 0.5  # what switched the diagnosis off before
    assert step_threads(MNIST_BUSY) == 1


def test_a_step_that_sleeps_gets_no_thread_advice_however_busy_the_host() -> None:
    sleeping = Pipeline(
        BatchCosts(load_cpu=0.002, load_wait=0.0, step_wall=0.050, step_cpu=0.001),
        Cores(usable=2, others=2.0),
        Setting(num_workers=1, prefetch_factor=2),
        step_threads=2,
    )
    assert step_threads(sleeping) is None


def test_workers_that_load_for_a_moment_per_step_take_no_cores_from_the_step() -> None:
    # imagenet at 1 thread: ~15 ms of loading per 3.5 s step, measured beside other load; idle workers are
    # not runnable processes, so 1 or 4 of them run at the step's pace (not 0.17-0.23 of 0.28 batches/s)
    imagenet = Pipeline(
        BatchCosts(load_cpu=0.015, load_wait=0.0, step_wall=3.5, step_cpu=3.5),
        Cores(usable=2, others=3.0),
        Setting(num_workers=0),
        measured_rate=1 / 3.515,
        step_threads=1,
    )
    serial = rate(imagenet, 0).rate
    for workers in (1, 4):
        assert rate(imagenet, workers).rate >= 0.99 * serial


def test_moving_off_num_workers_0_keeps_the_workers_between_epochs() -> None:
    sleepy = Pipeline(
        BatchCosts(load_cpu=0.001, load_wait=0.08, step_wall=0.01), Cores(2), Setting(num_workers=0)
    )
    advice = advise(sleepy)
    assert advice.setting.num_workers > 0 and advice.setting.persistent_workers
    assert any(note.startswith("persistent_workers=True") for note in advice.notes)


def test_bursts_on_a_loader_the_loop_never_waits_for_get_no_deeper_prefetch() -> None:
    costs = BatchCosts(load_cpu=0.0, load_wait=0.16, step_wall=0.01)
    waits = advise(Pipeline(costs, Cores(2), Setting(1, 2), burstiness=3.0, data_wait=0.6))
    never = advise(Pipeline(costs, Cores(2), Setting(16, 2), burstiness=3.0, data_wait=0.001))
    assert waits.setting.prefetch_factor == 4
    assert never.setting.prefetch_factor == 2 and not never.notes


@pytest.mark.parametrize(("spread", "advised"), [(0.02, 2), (0.3, 1)])
def test_a_gain_inside_the_runs_own_noise_is_not_advised(spread: float, advised: int) -> None:
    # one CPU-bound worker feeding a step it almost keeps up with: 2 workers are predicted ~1.2x
    costs = BatchCosts(load_cpu=0.024, load_wait=0.0, step_wall=0.020, step_cpu=0.020)
    pipeline = Pipeline(costs, Cores(4), Setting(1, 2), measured_rate=40.0, spread=spread)
    advice = advise(pipeline)
    assert advice.setting.num_workers == advised
    if advised == 2:
        assert advice.band is not None and advice.band[0] < advice.gain < advice.band[1]


def test_a_one_thread_step_on_a_busy_host_does_not_compete_with_workers() -> None:
    # pyload after torch.set_num_threads(1), the machine at a load of 7: 8 ms of pure-Python loading per batch
    # in the loop, a step on one core; 2 workers measured 2.4x (watch had said "compete": keep 0)
    one = Pipeline(
        BatchCosts(load_cpu=0.008, load_wait=0.0, step_wall=0.022, step_cpu=0.020, load_delay=0.010),
        Cores(usable=2, others=5.0),
        Setting(num_workers=0),
        measured_rate=32.0,
        step_threads=1,
    )
    advice = advise(one)
    assert not advice.competes and advice.setting.num_workers >= 1, advice.reason


def test_smoke_and_doctor_without_a_measured_loop_advise_what_watch_does() -> None:
    # the same pyload records as smoke and doctor read them: no loop measured, the step given by watch
    measured = Pipeline(
        BatchCosts(load_cpu=0.008, load_wait=0.0, step_wall=0.022, step_cpu=0.020, load_delay=0.010),
        Cores(usable=2, others=5.0),
        Setting(num_workers=0),
        measured_rate=1 / 0.040,
        step_threads=1,
    )
    profiled = Pipeline(measured.costs, measured.cores, measured.current, step_threads=1)
    assert advise(profiled).setting.num_workers == advise(measured).setting.num_workers >= 1
