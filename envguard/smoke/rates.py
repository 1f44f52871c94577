"""Rates from the sweep's raw timings (pure analysis, no verdicts): the steady-state rate from batch arrivals,
the ideal rate, efficiency and each dataset's DatasetResult (advice.py recommends from them).

Ideal with N workers (N=0 counts as one lane, the main process), per-sample wall time L and CPU time C:
    min(N / L, min(N, physical cores) / C)
which is N/L for an I/O-bound dataset (C ~ 0) and min(N, cores)/C for a CPU-bound one (C = L).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from collections.abc import Sequence

import msgspec

from envguard.smoke.measured import ConfigMeasurement, DatasetSweep, GpuPhase
from envguard.smoke.report import Bound, DatasetResult, SweepRow

NEAR_BEST = 0.05  # configurations within 5% of the best count as equally fast
MAX_EFFICIENCY = 1.05  # above this a measurement beat physics: reported as unreliable, never as a result
MIN_STEADY_ROUNDS = 6  # rounds after round 0 a configuration should have; fewer are flagged


def steady_rate(arrivals: Sequence[float], lanes: int, batch_size: int) -> float | None:
    """Samples/s after start-up. Workers deliver in rounds of `lanes` batches; the least-squares slope of each
    complete round's last arrival over the round number is the time per round, whatever the start-up took and
    however bursty the batches inside a round are. Round 0 is left out: a fresh iterator hands its first batch
    over 50-66 ms after it was made, which bends a short fit past the physical limit."""
    points = [(float(r), arrivals[r * lanes + lanes - 1]) for r in range(1, len(arrivals) // lanes)]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    if sxx <= 0 or sxy <= 0:
        return None
    return lanes * batch_size / (sxy / sxx)


# Student's t at 97.5% by degrees of freedom (rounds after round 0, minus 2): a 95% band from few rounds
T_975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23}


def rate_spread(arrivals: Sequence[float], lanes: int) -> float | None:
    """The steady rate's relative uncertainty: the 95% half-band (Student's t) of the mean round duration
    between the ends of rounds 1.. (the points `steady_rate` fits; each round's duration is what varies
    independently on a busy machine), relative to that mean; None with fewer than three rounds after round 0.
    """
    ends = [arrivals[r * lanes + lanes - 1] for r in range(1, len(arrivals) // lanes)]
    durations = [later - earlier for earlier, later in itertools.pairwise(ends)]
    if len(durations) < 2:
        return None
    mean = sum(durations) / len(durations)
    if mean <= 0:
        return None
    sd = math.sqrt(sum((d - mean) ** 2 for d in durations) / (len(durations) - 1))
    t = t_975(len(durations) - 1)
    return round(t * sd / math.sqrt(len(durations)) / mean, 4)


MIN_PASSES = 3  # passes of an interleaved sweep for its band (and for comparing rows pass by pass)


def pass_rates(raw: ConfigMeasurement, lanes: int) -> tuple[tuple[int, float], ...]:
    """(round, samples/s) of each pass of an interleaved sweep that has a steady rate."""
    out = []
    for timed in raw.passes:
        found = steady_rate(timed.arrivals_s, lanes, raw.batch_size)
        if found:
            out.append((timed.round, round(found, 3)))
    return tuple(out)


def t_975(degrees: int) -> float:
    """Student's t at 97.5% for `degrees` degrees of freedom (1.96 past the table's end)."""
    return T_975.get(degrees, 2.0 if degrees < 31 else 1.96)


def passes_spread(rates: Sequence[float]) -> float | None:
    """The relative 95% half-band (Student's t) of the mean of the passes' rates; None under two passes."""
    if len(rates) < 2:
        return None
    mean = statistics.fmean(rates)
    if mean <= 0:
        return None
    return round(t_975(len(rates) - 1) * statistics.stdev(rates) / math.sqrt(len(rates)) / mean, 4)


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """Nearest-rank percentile (fraction in 0..1)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = math.ceil(fraction * len(ordered))  # 1-based nearest rank
    return ordered[min(len(ordered), max(rank, 1)) - 1]


def ideal_rate(workers: int, latency_ms: float | None, cpu_ms: float | None, physical: int) -> float | None:
    """Samples/s a perfect loader reaches (see the module docstring)."""
    lanes = max(workers, 1)
    bounds: list[float] = []
    if latency_ms and latency_ms > 0:
        bounds.append(lanes / (latency_ms / 1000.0))
    if cpu_ms and cpu_ms > 0:
        bounds.append(min(lanes, max(physical, 1)) / (cpu_ms / 1000.0))
    return min(bounds) if bounds else None


def bound_of(latency_ms: float | None, cpu_ms: float | None) -> Bound:
    """CPU-bound when at least half of a sample's wall time is CPU time."""
    if latency_ms and cpu_ms and cpu_ms >= 0.5 * latency_ms:
        return "cpu"
    return "io"


def with_step(ideal: float | None, step: float, workers: int, batch_size: int) -> float | None:
    """The ideal rate with a training step of `step` s after each batch: in series with loading at N=0 (the
    loop loads, then steps), only a bound with workers (they load while the loop steps)."""
    if not ideal or step <= 0:
        return ideal
    if workers == 0:
        return batch_size / (batch_size / ideal + step)
    return min(ideal, batch_size / step)


def _row(
    raw: ConfigMeasurement, latency_ms: float | None, cpu_ms: float | None, physical: int, profiled: bool
) -> SweepRow:
    base = SweepRow(
        workers=raw.workers,
        pin_memory=raw.pin_memory,
        persistent_workers=raw.persistent_workers,
    )
    if raw.skipped:
        return dataclasses.replace(base, skipped=raw.skipped)
    arrivals, waits, batch_size, step_s = raw.arrivals_s, raw.waits_s, raw.batch_size, raw.step_s or 0.0
    lanes = max(raw.workers, 1)
    rate, spread, rounds, passes = _rate(raw, lanes)
    ideal = with_step(ideal_rate(raw.workers, latency_ms, cpu_ms, physical), step_s, raw.workers, batch_size)
    rate, efficiency, unreliable = _judged(rate, ideal, rounds, kept=raw.given or profiled)
    return dataclasses.replace(
        base,
        batches=raw.batches,
        batch_size=batch_size,
        batch_bytes=raw.batch_bytes or 0,
        first_batch_s=arrivals[0],
        startup_s=startup(arrivals[0], lanes, batch_size, rate, latency_ms),
        epoch2_first_batch_s=raw.epoch2_first_batch_s,
        samples_per_s=round(rate, 2) if rate else None,
        ideal_per_s=round(ideal, 2) if ideal else None,
        efficiency=round(efficiency, 3) if efficiency is not None else None,
        wait_p50_s=percentile(waits[lanes:], 0.5),
        wait_p95_s=percentile(waits[lanes:], 0.95),
        others_cpu=raw.others_cpu,
        throttled=raw.throttled,
        psi_some=raw.psi_some,
        rounds=rounds,
        few_rounds=rounds - 1 < MIN_STEADY_ROUNDS or (bool(raw.passes) and len(passes) < MIN_PASSES),
        unreliable=unreliable,
        rate_spread=spread if rate else None,
        pass_rates=passes,
        step_s=step_s,
        main_cpu_s=raw.main_cpu_s,
        given=raw.given,
        arrivals_s=arrivals,
        waits_s=waits,
    )


def _rate(
    raw: ConfigMeasurement, lanes: int
) -> tuple[float | None, float | None, int, tuple[tuple[int, float], ...]]:
    """(samples/s, its relative band, rounds, each pass's rate): one measurement's fit, or an interleaved
    sweep's median pass with the band of its passes (rounds after round 0 summed over them). A
    persistent-workers row is measured over a round or two for its epoch-2 start-up only: no rate."""
    arrivals = raw.arrivals_s
    if raw.passes:
        passes = pass_rates(raw, lanes)
        rate = statistics.median(r for _, r in passes) if passes else None
        rounds = 1 + sum(max(len(p.arrivals_s) // lanes - 1, 0) for p in raw.passes)
        return rate, passes_spread([r for _, r in passes]), rounds, passes
    rate = None if raw.persistent_workers else steady_rate(arrivals, lanes, raw.batch_size)
    return rate, rate_spread(arrivals, lanes) if rate else None, len(arrivals) // lanes, ()


def _judged(
    rate: float | None, ideal: float | None, rounds: int, kept: bool = False
) -> tuple[float | None, float | None, str]:
    """(rate, efficiency, why unreliable): a rate above MAX_EFFICIENCY of a nominal ideal beat physics and is
    dropped. `kept`: the user's own configuration, or any row whose ideal is an estimate (a per-sample profile
    taken on a busy machine, stop 34: 2 ms sleeps profiled at 2.2 ms dropped a row measured 955/920/947 per
    pass): its rate stays, and the ideal is what is in doubt."""
    efficiency = rate / ideal if rate and ideal else None
    if efficiency is None or efficiency <= MAX_EFFICIENCY:
        return rate, efficiency, ""
    if kept:
        return (
            rate,
            None,
            f"{efficiency:.2f} of the ideal from the per-sample profile: the profile, not your loader's "
            "measured rate, is in doubt, so this row is kept without an efficiency",
        )
    return (
        None,
        None,
        f"unreliable measurement: {efficiency:.2f} of the ideal is above the physical limit "
        f"(over {rounds - 1} rounds after start-up), so this rate is not used",
    )


def startup(
    first_batch_s: float, lanes: int, batch_size: int, rate: float | None, latency_ms: float | None
) -> float:
    """Worker start-up: the first batch's arrival minus the time the loader takes to deliver a batch per lane
    in steady state (one measured round: lanes x batch / rate), else one nominal batch. Oversubscribed CPUs
    make every round slow, the first one too: that is not start-up."""
    one_round = lanes * batch_size / rate if rate else batch_size * (latency_ms or 0.0) / 1000.0
    return round(max(0.0, first_batch_s - one_round), 4)


def summarize(entry: DatasetSweep, physical: int) -> DatasetResult:
    """A DatasetResult from one dataset's measured sweep."""
    nominal = entry.nominal_latency_ms is not None
    profile = entry.profile
    latency = entry.nominal_latency_ms if nominal else (profile.wall_ms if profile else None)
    cpu = entry.nominal_cpu_ms if nominal else (profile.cpu_ms if profile else None)
    rows = tuple(_row(raw, latency, cpu, physical, profiled=not nominal) for raw in entry.rows)
    sizes = [r.batch_bytes for r in rows if r.batch_bytes]
    off = None if nominal else (profile.off_ms if profile else None)
    return DatasetResult(
        name=entry.name,
        bound=bound_of(latency, cpu),
        latency_ms=latency,
        cpu_ms=cpu,
        nominal=nominal,
        off_ms=off,
        length=entry.length,
        iterable=entry.iterable,
        batch_bytes=max(sizes) if sizes else 0,
        rows=rows,
        error=entry.error,
    )


SWEPT = "your loader"  # the in-environment --sweep names its entries so (with the prefetch_factor after it)
MIN_BATCH_MS = 20.0  # below this much per-sample time per batch, collate/IPC overhead sets the rate


def swept(name: str) -> bool:
    """A dataset of --sweep: the user's own loader timed per configuration (issue 10)."""
    return name.startswith(SWEPT)


def claimable(entry: DatasetSweep) -> DatasetSweep:
    """The sweep entry with its ideal withdrawn when the per-sample cost cannot bound the rate: a batch's
    samples take under MIN_BATCH_MS, so the per-batch overhead (collate_fn, IPC) dominates. Other entries
    pass unchanged."""
    if not swept(entry.name):
        return entry
    profile = entry.profile
    sizes = [r.batch_size for r in entry.rows]
    per_batch = float((profile.wall_ms if profile else None) or 0.0) * max(sizes or [1])
    if per_batch >= MIN_BATCH_MS or profile is None:
        return entry
    return msgspec.structs.replace(entry, profile=msgspec.structs.replace(profile, wall_ms=None, cpu_ms=None))


LOADER_FLOOR_MS = 0.2  # per-sample cost below the DataLoader's own per-sample overhead: no efficiency verdict


def below_loader_floor(dataset: DatasetResult) -> bool:
    """A per-sample cost under the DataLoader's own per-sample overhead: the ideal is not reachable by any
    loader, so efficiency against it says nothing about the data (a warm read of small files)."""
    return dataset.latency_ms is not None and dataset.latency_ms < LOADER_FLOOR_MS


def pin_helps(gpu: GpuPhase | None) -> bool | None:
    """Whether pinned copies beat pageable ones by 20% in the GPU phase (None when not measured on CUDA)."""
    h2d = gpu.h2d if gpu else None
    pinned, pageable = (h2d.pinned_gbps, h2d.pageable_gbps) if h2d else (None, None)
    if not pinned or not pageable:
        return None
    return bool(pinned >= 1.2 * pageable)
