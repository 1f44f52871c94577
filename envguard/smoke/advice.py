"""The recommended DataLoader configuration of one swept dataset (pure).

An interleaved sweep (--sweep: every configuration ran a short pass in each round) is judged pass by pass:
the ratio of two configurations' rates within one round cancels the load that came and went between rounds.
The recommendation is the fewest workers no configuration with more workers beats, pass by pass: surely by
more than NEAR_BEST (its 95% band of the mean log ratio lies above 1 + NEAR_BEST), or likely by LIKELY (the
mean, where a busy machine leaves the band too wide to be sure: a 2x gain is not thrown away). A smaller,
uncertain gain keeps the fewer workers and says the measurement was inconclusive.

A sweep measured one configuration after another (or with a single pass) is judged by its rows' intervals:
the fastest row where its interval separates from the others; where several overlap (a busy machine),
inconclusive by measurement, and the input-pipeline model (envguard.pipeline) chooses among them from CPU
clocks where its predicted ratio fits the intervals, else the fewer workers."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from envguard.pipeline import BatchCosts, Cores, Pipeline, Setting, rate
from envguard.smoke.rates import NEAR_BEST, t_975
from envguard.smoke.report import DatasetResult, Recommendation, SweepRow

MIN_PAIRED = 2  # rounds two configurations must share to be compared pass by pass
LIKELY = 1.3  # a gain this large by the mean ratio is taken even when its band is too wide to be sure
PERSISTENT_SAVES_S = 0.1  # epoch-2 start-up persistent workers must save to be recommended


def spread_of(row: SweepRow) -> float:
    """A rate's relative uncertainty: its measured spread, at least NEAR_BEST."""
    return max(NEAR_BEST, row.rate_spread or 0.0)


def _plain(dataset: DatasetResult) -> list[SweepRow]:
    return [r for r in dataset.measured() if not r.persistent_workers]


def fastest(dataset: DatasetResult) -> SweepRow | None:
    """The fastest measured configuration (plain rows: a persistent-workers row is timed for start-up
    only)."""
    return max(_plain(dataset), key=lambda r: r.samples_per_s or 0.0, default=None)


def overlapping(dataset: DatasetResult) -> list[SweepRow]:
    """The rows a measurement cannot tell from the fastest: their intervals overlap its interval."""
    top = fastest(dataset)
    if top is None or not top.samples_per_s:
        return []
    floor = top.samples_per_s * (1 - spread_of(top))
    return [r for r in _plain(dataset) if (r.samples_per_s or 0.0) * (1 + spread_of(r)) >= floor]


def pipeline_at(dataset: DatasetResult, row: SweepRow, usable: int, cuda: bool = False) -> Pipeline | None:
    """The dataset as the input-pipeline model reads it, at one measured row: per batch, loading CPU and
    off-CPU wait from the per-sample profile (CPU clocks), the row's simulated step, the main process's
    receive CPU (its CPU per batch where workers load), the cores and the other load measured meanwhile."""
    if dataset.latency_ms is None and dataset.cpu_ms is None:
        return None
    batch = row.batch_size or 1
    cpu_ms = dataset.cpu_ms or 0.0
    off_ms = dataset.off_ms if dataset.off_ms is not None else max(0.0, (dataset.latency_ms or 0.0) - cpu_ms)
    delay_ms = max(0.0, (dataset.latency_ms or 0.0) - cpu_ms - off_ms)  # the run queue, during the profile
    receive = [
        max(0.0, (r.main_cpu_s or 0.0) / r.batches)
        for r in _plain(dataset)
        if r.workers > 0 and r.batches and r.main_cpu_s is not None
    ]
    return Pipeline(
        costs=BatchCosts(
            load_cpu=cpu_ms * batch / 1000.0,
            load_wait=off_ms * batch / 1000.0,
            load_delay=delay_ms * batch / 1000.0,
            step_wall=row.step_s,
            receive_cpu=sorted(receive)[len(receive) // 2] if receive else 0.0,
        ),
        cores=Cores(usable=usable, others=(row.others_cpu or 0.0) * usable),
        current=Setting(row.workers, 2 if row.workers else None),
        measured_rate=(row.samples_per_s or 0.0) / batch or None,
        accelerator=cuda,
    )


def predicted(dataset: DatasetResult, row: SweepRow, usable: int, cuda: bool = False) -> float | None:
    """The model's samples/s for a measured row (with that row's step), None without a per-sample cost."""
    pipeline = pipeline_at(dataset, row, usable, cuda)
    if pipeline is None:
        return None
    return rate(pipeline, row.workers).rate * (row.batch_size or 1)


@dataclass(frozen=True, slots=True)
class Ratio:
    """One configuration's rate over another's, pass by pass in the rounds both ran: the geometric mean,
    its 95% band, and how many rounds."""

    mean: float
    low: float
    high: float
    rounds: int

    def text(self) -> str:
        return f"{self.mean:.2f}x (95% band {self.low:.2f}-{self.high:.2f}, {self.rounds} interleaved rounds)"


def paired(faster: SweepRow, slower: SweepRow) -> Ratio | None:
    """`faster`'s rate over `slower`'s within each round both were measured in (see the module docstring);
    None under MIN_PASSES common rounds."""
    mine, theirs = dict(faster.pass_rates), dict(slower.pass_rates)
    logs = [math.log(mine[k] / theirs[k]) for k in sorted(set(mine) & set(theirs)) if mine[k] and theirs[k]]
    if len(logs) < MIN_PAIRED:
        return None
    mean = statistics.fmean(logs)
    half = t_975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return Ratio(math.exp(mean), math.exp(mean - half), math.exp(mean + half), len(logs))


def _beaten(dataset: DatasetResult, row: SweepRow) -> tuple[SweepRow, Ratio] | None:
    """The first configuration with more workers that beats `row` pass by pass: surely by more than
    NEAR_BEST, or likely by LIKELY or more (a band too wide to be sure must not throw a 2x gain away)."""
    for other in sorted(_plain(dataset), key=lambda r: r.workers):
        if other.workers <= row.workers:
            continue
        ratio = paired(other, row)
        if ratio is not None and (ratio.low > 1 + NEAR_BEST or ratio.mean >= LIKELY):
            return other, ratio
    return None


def _by_passes(
    dataset: DatasetResult, usable: int, cuda: bool
) -> tuple[SweepRow, list[SweepRow], str] | None:
    """The interleaved sweep's pick (see the module docstring): (row, the fastest row when it is not the
    pick, "measured" | "inconclusive" | "model"); None where the passes are too few to compare."""
    top = fastest(dataset)
    plain = sorted(_plain(dataset), key=lambda r: r.workers)
    if top is None or any(paired(top, r) is None for r in plain if r is not top):
        return None
    for row in plain:
        if _beaten(dataset, row) is not None:
            continue
        unsure = [r for r in plain if r.workers > row.workers and _maybe_faster(r, row)]
        others = [top] if top is not row else []
        if not unsure:
            return row, others, "measured"
        modelled = _modelled_passes(dataset, row, unsure, usable, cuda)
        if modelled is not None:
            return modelled, [row], "model"
        return row, others, "inconclusive"
    return top, [], "measured"


def _maybe_faster(row: SweepRow, than: SweepRow) -> bool:
    """The passes cannot rule out that `row` beats `than` by more than NEAR_BEST."""
    ratio = paired(row, than)
    return ratio is None or ratio.high > 1 + NEAR_BEST


def _modelled_passes(
    dataset: DatasetResult, row: SweepRow, unsure: list[SweepRow], usable: int, cuda: bool
) -> SweepRow | None:
    """Where the passes cannot tell `row` from rows with more workers (a busy machine), the model's pick
    among them (the fewest workers within NEAR_BEST of the best it predicts, from CPU clocks load does not
    move), where it predicts a gain of at least 1 + NEAR_BEST that lies inside the pass-by-pass band; else
    None (the fewer workers stay). bench_smoke_stability, a core kept busy: 2 workers 1.25x of 1 by the mean
    (band 0.97-1.61) gave 1 in one run of ten and 2 in nine."""
    rows = [row, *unsure]
    guesses = [predicted(dataset, r, usable, cuda) or 0.0 for r in rows]
    if min(guesses) <= 0:
        return None
    best = max(guesses)
    pick = min((r for r, g in zip(rows, guesses, strict=True) if g >= (1 - NEAR_BEST) * best), key=_workers)
    gain = guesses[rows.index(pick)] / guesses[0]
    ratio = paired(pick, row)
    if pick is row or ratio is None or gain < 1 + NEAR_BEST:
        return None
    return pick if ratio.low <= gain <= ratio.high else None


def _workers(row: SweepRow) -> int:
    return row.workers


def best_row(
    dataset: DatasetResult, *, cuda: bool, usable: int = 1
) -> tuple[SweepRow, list[SweepRow], str] | None:
    """The recommended row and the rows measured within its spread. Where the fastest row's interval
    separates from every other, it; where several overlap (a busy machine), the measurement cannot choose,
    so the model does, from CPU clocks that load does not move: the fewest workers within NEAR_BEST of the
    best it predicts among them, where that fits the intervals. Otherwise the fewest workers whose rate lies
    within the fastest row's own band (a row that overlaps only through its own wide spread, far below the
    fastest, is not chosen by default)."""
    top = fastest(dataset)
    if top is None or not top.samples_per_s:
        return None
    if all(r.pass_rates for r in _plain(dataset)):
        interleaved = _by_passes(dataset, usable, cuda)
        if interleaved is not None:
            return interleaved
    near = overlapping(dataset)
    if len(near) <= 1:
        return top, [], "measured"
    band = top.samples_per_s * (1 - spread_of(top))
    fewest = min((r for r in near if (r.samples_per_s or 0.0) >= band), key=lambda r: r.workers)
    modelled = _modelled(dataset, near, fewest, usable, cuda)
    chosen = modelled or fewest
    how = "model" if modelled is not None else "fewest of the inconclusive"
    return chosen, [r for r in near if r is not chosen], how


def _modelled(
    dataset: DatasetResult, near: list[SweepRow], fewest: SweepRow, usable: int, cuda: bool
) -> SweepRow | None:
    """The model's pick among rows the measurement cannot tell apart: the fewest workers within NEAR_BEST
    of the best it predicts, where its predicted ratio to the fewest-workers row lies within what the two
    intervals allow (else the model misses a bound the measurement shows: None)."""
    guesses = {r.workers: predicted(dataset, r, usable, cuda) for r in near}
    if any(g is None or g <= 0 for g in guesses.values()):
        return None
    best = max(g for g in guesses.values() if g is not None)
    pick = min(w for w, g in guesses.items() if g is not None and g >= (1 - NEAR_BEST) * best)
    chosen = next(r for r in near if r.workers == pick)
    if chosen is fewest:
        return chosen
    ratio = (guesses[pick] or 0.0) / (guesses[fewest.workers] or 1.0)
    rate, base = chosen.samples_per_s or 0.0, fewest.samples_per_s or 1.0
    low = rate * (1 - spread_of(chosen)) / (base * (1 + spread_of(fewest)))
    high = rate * (1 + spread_of(chosen)) / (base * (1 - spread_of(fewest)))
    return chosen if low <= ratio <= high else None


def persistent_saving(dataset: DatasetResult) -> float | None:
    """Seconds per epoch persistent workers save: epoch-2 first batch, plain minus persistent, at one N."""
    for row in dataset.rows:
        if row.persistent_workers and row.epoch2_first_batch_s is not None:
            plain = [
                r.epoch2_first_batch_s
                for r in dataset.rows
                if r.workers == row.workers
                and not r.persistent_workers
                and r.epoch2_first_batch_s is not None
            ]
            if plain:
                return round(plain[0] - row.epoch2_first_batch_s, 4)
    return None


def _inconclusive(
    dataset: DatasetResult, best: SweepRow, others: list[SweepRow], usable: int, by_model: bool
) -> str:
    """Why the measurement could not choose, with the other load it saw, and who chose instead."""
    listed = ", ".join(f"{r.workers}" for r in sorted(others, key=lambda r: r.workers))
    busy = max((r.others_cpu or 0.0) for r in [best, *others]) * usable
    load = f": other processes used {busy:.1f} cores meanwhile" if busy >= 0.25 else ""
    guess = predicted(dataset, best, usable)
    if by_model and guess is not None:
        chooser = (
            f"; the model (CPU clocks: {dataset.cpu_ms or 0:g} ms CPU, {dataset.off_ms or 0:g} ms off the "
            f"CPU per sample) predicts {guess:.0f} samples/s for num_workers={best.workers}, within what the "
            "measurements allow"
        )
    else:
        chooser = (
            "; the fewest workers within the fastest row's band (the model's figures do not fit these "
            "measurements, or it has none)"
        )
    return (
        f"num_workers={best.workers} and {listed} measured within their spread "
        f"(±{spread_of(best):.0%}): inconclusive by measurement{load}{chooser}"
    )


def _over_fewer(dataset: DatasetResult, best: SweepRow) -> str:
    """Why fewer workers were not chosen: the pass-by-pass ratio that beat the next fewer ("" when none)."""
    below = max(
        (r for r in _plain(dataset) if r.workers < best.workers), key=lambda r: r.workers, default=None
    )
    beaten = _beaten(dataset, below) if below is not None else None
    if below is None or beaten is None:
        return ""
    other, ratio = beaten
    how = (
        f"surely more than {NEAR_BEST:.0%} faster"
        if ratio.low > 1 + NEAR_BEST
        else f"likely faster (a {LIKELY - 1:.0%} gain or more by the mean, though the band is wide)"
    )
    return f"num_workers={other.workers} over num_workers={below.workers}: {ratio.text()}, {how}"


def _interleaved(dataset: DatasetResult, best: SweepRow, others: list[SweepRow], usable: int) -> str:
    """What the pass-by-pass comparison showed, in words: the gain over the next fewer workers, and where the
    fastest row is not the pick, its gain over the pick with the other load seen meanwhile."""
    fewer = _over_fewer(dataset, best)
    ratio = paired(others[0], best) if others else None
    if not others or ratio is None:
        return fewer or "the fewest workers measured"
    top = others[0].workers
    lead = f"{fewer}; " if fewer else ""
    if ratio.high <= 1 + NEAR_BEST:
        return (
            f"{lead}num_workers={top} over num_workers={best.workers}: {ratio.text()}, under "
            f"{NEAR_BEST:.0%}: more workers are not worth it"
        )
    busy = max((r.others_cpu or 0.0) for r in [best, *others]) * usable
    load = f"other processes used {busy:.1f} cores meanwhile; " if busy >= 0.25 else ""
    return (
        f"{lead}num_workers={top} over num_workers={best.workers}: {ratio.text()}: inconclusive by "
        f"measurement ({load}the gain may be under {NEAR_BEST:.0%}), so the fewer workers; rerun with a "
        "larger --budget for more rounds"
    )


def _modelled_text(dataset: DatasetResult, best: SweepRow, fewer: SweepRow, usable: int, cuda: bool) -> str:
    """Why the model chose among rows the passes could not separate, with the band it fitted."""
    ratio = paired(best, fewer)
    guesses = [predicted(dataset, r, usable, cuda) or 0.0 for r in (fewer, best)]
    busy = max((r.others_cpu or 0.0) for r in (best, fewer)) * usable
    load = f"other processes used {busy:.1f} cores meanwhile; " if busy >= 0.25 else ""
    band = ratio.text() if ratio is not None else "no common rounds"
    gain = guesses[1] / guesses[0] if guesses[0] else 0.0
    return (
        f"num_workers={best.workers} over num_workers={fewer.workers}: {band}: inconclusive by measurement "
        f"({load}the gain may be under {NEAR_BEST:.0%}); the model (CPU clocks: {dataset.cpu_ms or 0:g} ms "
        f"CPU, {dataset.off_ms or 0:g} ms off the CPU per sample) predicts {gain:.2f}x, inside that band, "
        f"so num_workers={best.workers}"
    )


def recommend(
    dataset: DatasetResult, *, cuda: bool, pin_measured: bool | None = None, usable: int = 1
) -> Recommendation | None:
    """The configuration to use for this dataset, with the reason in words. pin_memory only from a measured
    pinned-vs-pageable copy on CUDA (`pin_measured`); otherwise the default (False)."""
    chosen = best_row(dataset, cuda=cuda, usable=usable)
    if chosen is None or chosen[0].samples_per_s is None:
        return None
    best, others, how = chosen
    rate = chosen[0].samples_per_s
    plain = _plain(dataset)
    zero = [r.samples_per_s for r in plain if r.workers == 0 and r.samples_per_s]
    tried = max(r.workers for r in plain)
    parts = [f"num_workers={best.workers} delivers {rate:.0f} samples/s"]
    if best.efficiency is not None and best.ideal_per_s:
        parts.append(f"({best.efficiency:.0%} of the ideal {best.ideal_per_s:.0f})")
    if zero and best.workers > 0:
        parts.append(f"= {rate / zero[0]:.1f}x num_workers=0")
    by_model = how == "model"
    if best.pass_rates and how in ("measured", "inconclusive"):
        parts.append("; " + _interleaved(dataset, best, others, usable))
    elif best.pass_rates and by_model and others and others[0].pass_rates:
        parts.append("; " + _modelled_text(dataset, best, others[0], usable, cuda))
    elif others:
        parts.append("; " + _inconclusive(dataset, best, others, usable, by_model))
    elif best.workers < tried:
        parts.append(f"; more workers (up to {tried}) are slower")
    elif dataset.bound == "io" and best.workers > 0:
        parts.append("; still scaling at the most workers tried (I/O-bound: more workers than CPUs can help)")
    saving = persistent_saving(dataset)
    persistent = best.workers > 0 and saving is not None and saving >= PERSISTENT_SAVES_S
    if persistent:
        parts.append(f"; persistent_workers=True saves {saving:.2f} s of worker start-up each epoch")
    pin = bool(cuda and pin_measured)
    notes: tuple[str, ...] = ()
    if pin:
        parts.append("; pin_memory=True: pinned host-to-device copies measured faster than pageable ones")
    elif not cuda:
        notes = ("pin_memory stays False: without an accelerator it does nothing",)
    setting = Setting(best.workers, 2 if best.workers else None, persistent, pin)
    return Recommendation(
        dataset=dataset.name,
        workers=best.workers,
        pin_memory=pin,
        persistent_workers=persistent,
        samples_per_s=rate,
        efficiency=best.efficiency,
        reason=" ".join(parts).replace(" ;", ";"),
        tied_with=min((r.workers for r in others), default=None),
        rule=how,
        predicted_per_s=_rounded(predicted(dataset, best, usable, cuda)),
        dataloader=f"DataLoader({setting.call()})",
        notes=notes,
    )


def _rounded(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None


def rate_at(dataset: DatasetResult, workers: int) -> float | None:
    """The best measured samples/s at a given worker count (any pin/persistent setting)."""
    rates = [r.samples_per_s for r in dataset.measured() if r.workers == workers and r.samples_per_s]
    return max(rates) if rates else None
