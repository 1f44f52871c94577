"""An interleaved --sweep judged pass by pass (issue 27: "configurations interleaved; rounds repeated until
the intervals separate"): load that comes and goes between rounds moves every configuration of a round alike,
so the ratio within a round is what decides, and the answer is the same from run to run."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from envguard.smoke import advice, rates
from envguard.smoke.report import DatasetResult
from envguard.smoke.verdicts.loader import _as_given_interleaved

Summarize = Callable[..., DatasetResult]
BATCH = 8


def passes(workers: int, rate: float, drift: list[float], noise: float, rng: random.Random) -> list[dict]:
    """One pass per round of `workers` lanes at `rate` samples/s times that round's load factor, each steady
    round off by up to +-`noise` (the module's pass format)."""
    lanes = max(workers, 1)
    out = []
    for number, factor in enumerate(drift):
        period = lanes * BATCH / (rate * factor)
        end, arrivals = 0.2, []
        for _ in range(4):  # round 0 (start-up) and three steady rounds
            end += period * (1 + rng.uniform(-noise, noise))
            arrivals += [end - period * (lanes - 1 - k) / lanes for k in range(lanes)]
        out.append(
            {"round": number, "at_s": number, "arrivals_s": arrivals, "waits_s": [0.01] * len(arrivals)}
        )
    return out


def entry(by_workers: dict[int, float], drift: list[float], noise: float, seed: int, given: int = 1) -> dict:
    rng = random.Random(seed)
    rows = []
    for workers, rate in by_workers.items():
        timed = passes(workers, rate, drift, noise, rng)
        rows.append(
            {
                "workers": workers,
                "pin_memory": False,
                "persistent_workers": False,
                "prefetch_factor": 2 if workers else None,
                "batch_size": BATCH,
                "batches": sum(len(p["arrivals_s"]) for p in timed),
                "arrivals_s": timed[0]["arrivals_s"],
                "waits_s": timed[0]["waits_s"],
                "main_cpu_s": 0.1,
                "given": workers == given,
                "passes": timed,
            }
        )
    return {"name": "your loader", "rows": rows, "profile": {"wall_ms": 1.0, "cpu_ms": 1.0, "samples": 64}}


def drift(rng: random.Random, rounds: int = 6) -> list[float]:
    """A shared machine: each round at its own share of the CPU (0.35 to 1.0 of a quiet one)."""
    return [rng.uniform(0.35, 1.0) for _ in range(rounds)]


def test_each_pass_is_a_rate_and_the_row_is_their_median(summarize: Summarize) -> None:
    summary = summarize(entry({1: 400.0}, [1.0, 0.5, 0.8], noise=0.0, seed=0))
    (row,) = summary.rows
    assert [k for k, _ in row.pass_rates] == [0, 1, 2]
    assert [r for _, r in row.pass_rates] == pytest.approx([400.0, 200.0, 320.0], rel=1e-3)
    assert row.samples_per_s == pytest.approx(320.0, rel=1e-3) and row.rounds == 1 + 3 * 3
    assert row.rate_spread is not None and row.rate_spread > 0.3  # the load moved the passes a lot


@pytest.mark.parametrize("seed", range(20))
def test_equal_configurations_under_drifting_load_give_one_answer(summarize: Summarize, seed: int) -> None:
    """1, 2 and 4 workers equally fast, the load moving each round's rate by up to 3x: their rows' own
    intervals overlap and the fastest by median is random, but within a round they match: always 1."""
    rng = random.Random(seed)
    summary = summarize(entry({0: 120.0, 1: 400.0, 2: 400.0, 4: 400.0}, drift(rng), noise=0.03, seed=seed))
    rec = advice.recommend(summary, cuda=False)
    assert rec is not None and rec.workers == 1 and rec.rule in ("measured", "inconclusive")


@pytest.mark.parametrize("seed", range(20))
def test_a_real_gain_under_drifting_load_is_kept(summarize: Summarize, seed: int) -> None:
    """2 workers 1.35x of 1 in every round (a core 1 worker leaves idle), under the same drift: always 2,
    by measurement, with the ratio and its band in the reason."""
    rng = random.Random(seed)
    summary = summarize(entry({0: 120.0, 1: 300.0, 2: 405.0, 4: 405.0}, drift(rng), noise=0.03, seed=seed))
    rec = advice.recommend(summary, cuda=False)
    assert rec is not None and rec.workers == 2 and rec.rule == "measured"
    assert re.search(r"num_workers=2 over num_workers=1: 1\.3\dx \(95% band", rec.reason)


def test_a_gain_the_rounds_cannot_pin_down_is_inconclusive_and_the_fewer_win(summarize: Summarize) -> None:
    """2 workers 1.08x of 1 with 15% noise per steady round: the band reaches below 1.05, so 1, said so."""
    summary = summarize(entry({1: 300.0, 2: 324.0}, [1.0, 0.6, 0.9, 0.5], noise=0.15, seed=4))
    two, one = (next(r for r in summary.rows if r.workers == n) for n in (2, 1))
    ratio = advice.paired(two, one)
    assert ratio is not None and ratio.low <= 1.05 < ratio.high
    rec = advice.recommend(summary, cuda=False)
    assert rec is not None and rec.workers == 1 and rec.rule == "inconclusive"
    assert "inconclusive by measurement" in rec.reason and "so the fewer workers" in rec.reason


def test_two_rounds_compare_pass_by_pass_and_one_falls_back_to_the_rows_intervals(
    summarize: Summarize,
) -> None:
    """A budget that fit two rounds still compares within them (a wide band: t = 12.7); one round gives
    no pass-by-pass band, and the rows' own intervals decide as for a sweep measured row after row."""
    summary = summarize(entry({1: 300.0, 2: 600.0}, [1.0, 0.6], noise=0.0, seed=0))
    rec = advice.recommend(summary, cuda=False)
    assert rec is not None and rec.rule == "measured" and rec.workers == 2
    summary = summarize(entry({1: 300.0, 2: 600.0}, [1.0], noise=0.0, seed=0))
    rec = advice.recommend(summary, cuda=False)
    assert rec is not None and rec.workers == 2 and "interleaved rounds" not in rec.reason


def test_the_loader_as_given_is_judged_against_the_recommendation(summarize: Summarize) -> None:
    """WARN only where the recommended setting surely beats the loader as given by 1.2x; PASS where the
    loader as given is the recommendation, whichever row is fastest by median."""
    rng = random.Random(7)
    slow = summarize(entry({0: 120.0, 1: 300.0, 2: 600.0}, drift(rng), noise=0.02, seed=1))
    rec = advice.recommend(slow, cuda=False)
    assert rec is not None and rec.workers == 2
    mine = next(r for r in slow.rows if r.workers == 1)
    top = advice.fastest(slow)
    assert top is not None
    found = _as_given_interleaved("throughput", None, mine, top, rec)
    assert found.status == "WARN" and re.search(r"is (1\.9\d|2\.0\d)x \(95% band", found.evidence)

    same = summarize(entry({0: 120.0, 1: 400.0, 2: 400.0}, drift(rng), noise=0.03, seed=2))
    rec = advice.recommend(same, cuda=False)
    top = advice.fastest(same)
    assert rec is not None and rec.workers == 1 and top is not None
    mine = next(r for r in same.rows if r.workers == 1)
    assert _as_given_interleaved("throughput", None, mine, top, rec).status == "PASS"


def test_a_large_gain_under_a_band_too_wide_to_be_sure_is_not_thrown_away(summarize: Summarize) -> None:
    """bench_smoke_stability with a core kept busy: 2 workers 1.5-2.5x of 1 round by round, three rounds, a
    band reaching below 1.05 ("2.06x (95% band 0.93-4.60)"): the fewer-workers rule gave 1 in half the runs
    and 2 in the others. A mean gain of LIKELY or more is taken: 2, and the reason says it is likely."""
    summary = summarize(entry({0: 60.0, 1: 300.0, 2: 600.0, 4: 630.0}, [1.0, 0.6, 0.9], noise=0.35, seed=7))
    one, two = (next(r for r in summary.rows if r.workers == n) for n in (1, 2))
    ratio = advice.paired(two, one)
    assert ratio is not None and ratio.low <= 1 + rates.NEAR_BEST and ratio.mean >= advice.LIKELY
    rec = advice.recommend(summary, cuda=False)
    assert rec is not None and rec.workers == 2 and rec.rule == "inconclusive"
    assert "num_workers=2 over num_workers=1: 2.02x" in rec.reason and "likely faster" in rec.reason


def test_a_gain_the_passes_cannot_confirm_is_the_models_where_it_fits_the_band(summarize: Summarize) -> None:
    """bench_smoke_stability with a core kept busy, the run in ten that said 1: 2 workers 1.2x of 1 by the
    mean, a band from under 1.05 to 1.6: neither surely nor likely faster, so the fewer workers, where the
    nine other runs gave 2. The model (CPU clocks: 4 ms of CPU per sample, the other process on a core seen in
    every row: 1 worker gets 1 of 2.1 runnable processes' share of 2 cores, 2 workers 2 of 3) predicts 2 at
    1.27x of 1, inside the band: 2, chosen by the model and saying so."""
    busy = entry({0: 60.0, 1: 250.0, 2: 275.0}, [1.0, 0.7, 0.9, 0.8], noise=0.3, seed=0)
    busy["profile"] = {"wall_ms": 4.0, "cpu_ms": 4.0, "samples": 64}
    for row in busy["rows"]:
        row["others_cpu_fraction"] = 0.5
    summary = summarize(busy)
    one, two = (next(r for r in summary.rows if r.workers == n) for n in (1, 2))
    ratio = advice.paired(two, one)
    assert ratio is not None and ratio.low <= 1 + rates.NEAR_BEST and ratio.mean < advice.LIKELY
    guess = [advice.predicted(summary, r, usable=2) or 0.0 for r in (one, two)]
    assert guess[1] / guess[0] == pytest.approx(1.27, abs=0.01) and ratio.low <= 1.27 <= ratio.high, ratio
    rec = advice.recommend(summary, cuda=False, usable=2)
    assert rec is not None and rec.workers == 2 and rec.rule == "model", rec
    assert "inconclusive by measurement" in rec.reason and "the model" in rec.reason
    # the same passes where the model sees no gain (one usable core): the fewer workers, as before
    alone = advice.recommend(summary, cuda=False, usable=1)
    assert alone is not None and alone.workers == 1 and alone.rule == "inconclusive"
