"""Which DataLoader configurations to time within the budget (pure: stdlib only, no clock, no torch).

Coarse to fine over worker counts: the essential counts (0, the most, the user's own), then the counts that
halve the widest gaps on a log scale; each measured over round 0 plus MIN_STEADY rounds, or left out. Only an
essential count may be measured with fewer rounds (at least FLOOR_STEADY), and then the row says so. After the
coarse pass `refine` names the counts around the knee worth measuring with what is left.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence

MIN_STEADY = 6  # rounds after round 0 for a rate to trust
FLOOR_STEADY = 2  # the least an essential count gets when the budget is short (flagged)
SHUTDOWN_S = 0.05  # joining workers that finished their batch
NEAR_BEST = 0.05
PERSISTENT_SAVES_S = 0.1  # epoch-2 start-up persistent workers must save to be recommended (as envguard's)
STEP_FRACTION = 0.5  # default simulated training step: half the ideal time between two batches

Plan = Dict[str, Any]


def round_seconds(
    workers: int,
    per_sample_s: float,
    batch_size: int,
    cpu_bound: bool,
    cpus: int,
    step_s: Optional[float] = None,
) -> float:
    """Time for one round (one batch from each of max(N, 1) lanes): I/O waits overlap, CPU work shares cores.
    The training step after each batch (default STEP_FRACTION of a batch's ideal interval) runs in series with
    loading at N=0 and overlaps it with workers, where it only bounds the rate."""
    lanes = max(workers, 1)
    base = max(batch_size * per_sample_s, 1e-4)
    loading = base * max(1.0, lanes / max(cpus, 1)) if cpu_bound else base
    step = STEP_FRACTION * base / lanes if step_s is None else step_s
    return loading + step if workers == 0 else max(loading, lanes * step)


def cost_seconds(workers: int, steady: int, round_s: float, startup_s: float, epoch2: bool = False) -> float:
    """Wall time of one configuration: start-up and round 0, `steady` rounds, the next epoch's first batch."""
    second = startup_s + round_s if epoch2 and workers > 0 else 0.0
    start = startup_s if workers > 0 else 0.0  # no worker processes to start at N=0
    return start + round_s * (1 + steady) + second + SHUTDOWN_S


def coarse_to_fine(counts: Sequence[int], essential: Sequence[int]) -> List[int]:
    """Measuring order: the essential counts, then each time the count farthest (in log2(N + 1), the scale on
    which loaders scale) from every count already chosen; ties go to fewer workers. 16 cores: 0, 16, 4, 1, 8,
    2, 12."""
    wanted = sorted(set(counts))
    order = [n for n in sorted(set(essential)) if n in wanted]
    rest = [n for n in wanted if n not in order]
    while rest:
        if not order:
            pick = rest[0]
        else:
            pick = max(rest, key=lambda n: (min(abs(math.log2(n + 1) - math.log2(m + 1)) for m in order), -n))
        order.append(pick)
        rest.remove(pick)
    return order


def plan(
    counts: Sequence[int],
    essential: Sequence[int],
    *,
    per_sample_s: float,
    batch_size: int,
    budget_s: float,
    startup_s: float,
    cpu_bound: bool,
    cpus: int,
    step_s: Optional[float] = None,
) -> List[Plan]:
    """The configurations to measure, in order, each with its batches; what does not fit is left out."""
    left = budget_s
    out: List[Plan] = []
    for workers in coarse_to_fine(counts, essential):
        round_s = round_seconds(workers, per_sample_s, batch_size, cpu_bound, cpus, step_s)
        steady = MIN_STEADY
        if cost_seconds(workers, steady, round_s, startup_s) > left:
            if workers not in essential:
                continue
            steady = math.floor((left - startup_s - SHUTDOWN_S) / round_s) - 1
            steady = max(FLOOR_STEADY, min(steady, MIN_STEADY))
        cost = cost_seconds(workers, steady, round_s, startup_s)
        left -= cost
        out.append(
            {
                "workers": workers,
                "steady_rounds": steady,
                "batches": max(workers, 1) * (1 + steady),
                "few_rounds": steady < MIN_STEADY,
                "cost_s": round(cost, 4),
            }
        )
    return out


def shares(
    datasets: Sequence[Dict[str, Any]],
    counts: Sequence[int],
    essential: Sequence[int],
    *,
    batch_size: int,
    budget_s: float,
    startup_s: float,
    cpus: int,
    step_s: Optional[float] = None,
) -> List[float]:
    """Seconds of the sweep for each dataset (`per_sample_s`, `cpu_bound`) sharing `budget_s`: worker counts
    are handed out in turn, the next one (coarse to fine) to the dataset with the fewest so far, each with
    round 0 + MIN_STEADY rounds, while one fits; then the most workers' epoch-2 first batch where it fits.
    So two datasets get as many counts each as the budget holds, whatever one round of each costs; the time
    left over is split in proportion to what each got."""
    order = coarse_to_fine(counts, essential)
    got, taken = [0.0] * len(datasets), [0] * len(datasets)
    open_ = set(range(len(datasets)))
    left = budget_s
    while open_:
        turn = min(open_, key=lambda i: (taken[i], i))
        spec = datasets[turn]
        if taken[turn] < len(order):
            workers = order[taken[turn]]
            round_s = round_seconds(
                workers, spec["per_sample_s"], batch_size, spec["cpu_bound"], cpus, step_s
            )
            cost = cost_seconds(workers, MIN_STEADY, round_s, startup_s)
            if cost <= left:
                got[turn], taken[turn], left = got[turn] + cost, taken[turn] + 1, left - cost
                continue
        open_.discard(turn)
    for turn, spec in enumerate(datasets):  # the start-up a new epoch pays at the most workers
        most = max(order[: taken[turn]], default=0)
        extra = startup_s + round_seconds(
            most, spec["per_sample_s"], batch_size, spec["cpu_bound"], cpus, step_s
        )
        if most > 0 and extra <= left:
            got[turn], left = got[turn] + extra, left - extra
    total = sum(got)
    if total <= 0:
        return [budget_s / max(len(datasets), 1)] * len(datasets)
    return [g + left * g / total for g in got]


def quick_rate(arrivals: Sequence[float], lanes: int, batch_size: int) -> Optional[float]:
    """Samples/s from the last arrival of each round after round 0 (first to last), for choosing counts
    only."""
    ends = [arrivals[r * lanes + lanes - 1] for r in range(1, len(arrivals) // lanes)]
    if len(ends) < 2 or ends[-1] <= ends[0]:
        return None
    return (len(ends) - 1) * lanes * batch_size / (ends[-1] - ends[0])


def refine(rates: Dict[int, float]) -> List[int]:
    """Unmeasured worker counts halving the gaps on each side of the knee (the fewest workers within NEAR_BEST
    of the best rate), the lower side first: where the answer is decided."""
    if not rates:
        return []
    best = max(rates.values())
    knee = min(n for n, r in rates.items() if r >= (1 - NEAR_BEST) * best)
    lower = max([n for n in rates if n < knee], default=None)
    upper = min([n for n in rates if n > knee], default=None)
    out: List[int] = []
    for low, high in ((lower, knee), (knee, upper)):
        if low is not None and high is not None and high - low >= 2:
            out.append((low + high) // 2)
    return out
