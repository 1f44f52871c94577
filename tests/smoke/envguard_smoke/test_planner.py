"""planner.py, the sweep planner, as a pure function on simulated machines: what gets measured within the
default budget."""

from __future__ import annotations

import pytest

from envguard.machine.host import CpuInfo
from envguard.smoke.envguard_smoke import planner
from envguard.smoke.report import SmokeOptions
from envguard.smoke.run import SETTLE_S
from envguard.smoke.settings import settings, worker_counts

# What the default 25 s leaves the sweep of one dataset: minus settle (2.5 s), torch import and determinism
# (~2 s)
ONE_DATASET_S = 20.0


def machine(cores: int) -> CpuInfo:
    return CpuInfo(logical=cores, affinity=cores, physical=cores, quota=None, usable=cores)


@pytest.mark.parametrize("cores", [16, 64])
def test_default_budget_measures_six_worker_counts_with_six_rounds(cores: int) -> None:
    """Before: 3 of 30 configurations per dataset on 16 cores (0, 32 and one persistent variant)."""
    counts = worker_counts(SmokeOptions(), machine(cores))
    plan = planner.plan(
        counts,
        [0, cores],
        per_sample_s=0.010,
        batch_size=32,
        budget_s=ONE_DATASET_S,
        startup_s=0.1,
        cpu_bound=False,
        cpus=cores,
    )
    measured = [p["workers"] for p in plan]
    assert len(measured) >= 6 and {0, cores} <= set(measured)
    assert all(p["steady_rounds"] >= planner.MIN_STEADY and not p["few_rounds"] for p in plan)
    assert sum(p["cost_s"] for p in plan) <= ONE_DATASET_S
    # coarse first: both ends and the middle of the log scale before any neighbour of a measured count
    assert measured[:3] == [0, cores, 4 if cores == 16 else 8]


def test_coarse_to_fine_order() -> None:
    assert planner.coarse_to_fine([0, 1, 2, 4, 8, 12, 16], [0, 16]) == [0, 16, 4, 1, 8, 2, 12]
    assert planner.coarse_to_fine([0, 1, 2, 3], [0, 3, 2]) == [0, 2, 3, 1]


def test_short_budget_keeps_essentials_with_fewer_rounds_and_says_so() -> None:
    plan = planner.plan(
        [0, 1, 2, 4],
        [0, 4],
        per_sample_s=0.010,
        batch_size=32,
        budget_s=2.0,
        startup_s=0.1,
        cpu_bound=False,
        cpus=4,
    )
    assert [p["workers"] for p in plan] == [0, 4]
    assert all(
        p["few_rounds"] and planner.FLOOR_STEADY <= p["steady_rounds"] < planner.MIN_STEADY for p in plan
    )


def test_round_time_model() -> None:
    # I/O waits overlap across workers; CPU work shares the cores; the default step runs in series only at N=0
    assert planner.round_seconds(4, 0.01, 32, False, 2) == pytest.approx(0.32)
    assert planner.round_seconds(4, 0.01, 32, True, 2) == pytest.approx(0.64)
    assert planner.round_seconds(0, 0.01, 32, False, 2) == pytest.approx(0.32 * 1.5)
    assert planner.round_seconds(2, 0.01, 32, False, 2, step_s=0.5) == pytest.approx(
        1.0
    )  # the step bounds it


def test_refine_halves_the_gaps_around_the_knee() -> None:
    rates = {0: 90.0, 1: 95.0, 4: 380.0, 16: 395.0}
    assert planner.refine(rates) == [2, 10]  # knee at 4 (16 adds < 5%): look at 2 and 10
    assert planner.refine({0: 90.0, 1: 95.0}) == []
    assert planner.refine({}) == []


def test_quick_rate_drops_round_zero() -> None:
    arrivals = [0.5, 0.6, 0.7, 0.8]  # round 0 late by 0.4 s, then one batch per 0.1 s
    assert planner.quick_rate(arrivals, 1, 10) == pytest.approx(100.0)


# What the default budget loses before the sweep, rounded up from a default run here (phase_seconds, load ~6
# on 2 cores): start-up 1.74 s (torch import), determinism 0.45 s, envguard's start before the module 0.15 s.
BEFORE_SWEEP_S = 2.5


def default_sweep(cores: int) -> list[list[planner.Plan]]:
    """The default `envguard smoke` (two synthetic datasets sharing the budget) planned on `cores` CPUs."""
    options = SmokeOptions()
    counts = worker_counts(options, machine(cores))
    config = settings(options, counts, options.budget_s - SETTLE_S, None, cores)
    sweep_s = config["budget_s"] - BEFORE_SWEEP_S
    datasets = [
        {"per_sample_s": options.io_ms / 1000.0, "cpu_bound": False},
        {"per_sample_s": options.cpu_ms / 1000.0, "cpu_bound": True},
    ]
    common = {"batch_size": options.batch_size, "startup_s": 0.1, "cpus": cores}
    shares = planner.shares(datasets, counts, config["essential_workers"], budget_s=sweep_s, **common)
    assert sum(shares) == pytest.approx(sweep_s)
    return [
        planner.plan(
            counts,
            config["essential_workers"],
            per_sample_s=spec["per_sample_s"],
            cpu_bound=spec["cpu_bound"],
            budget_s=share,
            **common,
        )
        for spec, share in zip(datasets, shares, strict=True)
    ]


@pytest.mark.parametrize("cores", [16, 64])
def test_default_run_measures_six_worker_counts_per_dataset(cores: int) -> None:
    """Both datasets of the default run, sharing the default budget: before, 5 (io) and 4 (cpu) counts."""
    plans = default_sweep(cores)
    for plan in plans:
        measured = [p["workers"] for p in plan]
        assert len(measured) >= 6 and {0, cores} <= set(measured), measured
        assert all(p["steady_rounds"] >= planner.MIN_STEADY and not p["few_rounds"] for p in plan)
    # the same counts for both: the coarse pass covers the same scale for each
    assert [p["workers"] for p in plans[0]][:6] == [p["workers"] for p in plans[1]][:6]


def test_shares_give_each_dataset_as_many_counts_as_fit() -> None:
    """A dataset twice as costly per round gets twice the seconds, not the same number of seconds."""
    datasets = [{"per_sample_s": 0.010, "cpu_bound": False}, {"per_sample_s": 0.005, "cpu_bound": False}]
    counts = [0, 1, 2, 4, 8]
    shares = planner.shares(datasets, counts, [0, 8], batch_size=32, budget_s=14.0, startup_s=0.1, cpus=8)
    fitted = [
        planner.plan(
            counts,
            [0, 8],
            per_sample_s=d["per_sample_s"],
            batch_size=32,
            budget_s=s,
            startup_s=0.1,
            cpu_bound=False,
            cpus=8,
        )
        for d, s in zip(datasets, shares, strict=True)
    ]
    assert [len(f) for f in fitted] == [3, 4]  # a split by cost per sample (2/3, 1/3) gave [3, 3]
    assert shares[0] > shares[1]
    # nothing fits: an even split, never a negative share
    assert planner.shares(datasets, counts, [0, 8], batch_size=32, budget_s=0.1, startup_s=0.1, cpus=8) == [
        0.05,
        0.05,
    ]
