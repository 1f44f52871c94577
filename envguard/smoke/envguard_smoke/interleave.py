"""Interleaved measurement of DataLoader configurations (pure: stdlib only, no clock, no torch).

Each configuration's row holds passes: a fresh iterator timed over its round 0 (start-up) and a few steady
rounds. A round runs one pass of every configuration, in an order rotated from round to round, so load that
comes and goes between rounds moves them alike; envguard compares them pass by pass within a round. Rounds
repeat until the answer cannot change (`settled`) or the time ends.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Tuple

PASS_ROUNDS = 3  # steady rounds per pass, after its round 0 (the start-up)
MIN_PASS_S = 0.2  # a pass's steady part lasts at least this long (a few scheduler slices measure the slices)
MOST_ROUNDS = 64  # steady rounds per pass at most (MIN_PASS_S ends it first unless batches are slow)
MIN_PASSES = 3  # rounds of passes before the measurement may stop early
RETIRE_AFTER = 2  # rounds after which a configuration surely far slower is left out (t = 12.7 at two)
MAX_PASSES = 12  # rounds of passes at most: more narrow nothing a user acts on
MARGIN = 0.05  # a gain under this is not worth more workers (envguard's NEAR_BEST)
T_975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23}
KEPT = ("round", "at_s", "arrivals_s", "waits_s", "wall_s", "main_cpu_s")  # a pass's fields in the JSON

Row = Dict[str, Any]


def order(count: int, number: int) -> List[int]:
    """Round `number`'s order of `count` configurations: rotated by one each round (no fixed first slot)."""
    start = number % count if count else 0
    return list(range(start, count)) + list(range(start))


def round_s(passes: List[Row], lanes: int) -> Optional[float]:
    """Seconds per steady round in the latest pass that has two round ends after round 0."""
    for timed in reversed(passes):
        ends: List[float] = timed["arrivals_s"][2 * lanes - 1 :: lanes]
        if len(ends) >= 2 and ends[-1] > ends[0]:
            return (ends[-1] - ends[0]) / (len(ends) - 1)
    return None


def enough(lanes: int) -> Callable[[List[float]], bool]:
    """When a pass may stop: at the end of a round, with at least PASS_ROUNDS steady rounds and MIN_PASS_S
    of them after round 0 (a window of a few scheduler slices measures the slices, not the loader)."""

    def done(arrivals: List[float]) -> bool:
        count = len(arrivals)
        if count % lanes or count < lanes * (1 + PASS_ROUNDS):
            return False
        return arrivals[-1] - arrivals[lanes - 1] >= MIN_PASS_S

    return done


def most_batches(lanes: int) -> int:
    """Batches a pass takes at most (MOST_ROUNDS steady rounds after round 0)."""
    return lanes * (1 + MOST_ROUNDS)


def pass_cost(passes: List[Row]) -> float:
    """Wall seconds the next pass is expected to take: the last one's (0.0 before any)."""
    return float(passes[-1]["wall_s"]) if passes else 0.0


def pass_rate(timed: Row, lanes: int, size: int) -> Optional[float]:
    """Samples/s of one pass from its round ends after round 0 (a quick figure for stopping early; envguard
    fits its own from the arrivals)."""
    per_round = round_s([timed], lanes)
    return lanes * size / per_round if per_round else None


def _pass_rates(rows: List[Row], size: int) -> List[Dict[int, float]]:
    rates: List[Dict[int, float]] = []
    for row in rows:
        lanes = max(row["workers"], 1)
        mine = {p["round"]: pass_rate(p, lanes, size) for p in row.get("passes") or []}
        rates.append({k: v for k, v in mine.items() if v})
    return rates


def _band(
    top: Dict[int, float], other: Dict[int, float], least: int = MIN_PASSES
) -> Optional[Tuple[float, float]]:
    """(low, high) of the 95% band of the mean log ratio top/other over their common rounds; None under
    `least` of them."""
    logs = [math.log(top[k] / other[k]) for k in sorted(set(top) & set(other))]
    if len(logs) < max(least, 2):
        return None
    mean = sum(logs) / len(logs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    half = T_975.get(len(logs) - 1, 2.0) * sd / math.sqrt(len(logs))
    return mean - half, mean + half


def _top(rates: List[Dict[int, float]]) -> int:
    medians = [sorted(r.values())[len(r) // 2] if r else 0.0 for r in rates]
    return max(range(len(rates)), key=lambda i: medians[i])


def retired(rows: List[Row], size: int) -> List[int]:
    """Configurations decided already: surely slower than the fastest by more than MARGIN pass by pass, so
    neither the answer nor the fastest; later rounds leave them out and measure the others more often."""
    rates = _pass_rates(rows, size)
    if not rows:
        return []
    top = _top(rates)
    out = []
    for index in range(len(rows)):
        band = _band(rates[top], rates[index], RETIRE_AFTER) if index != top else None
        if band is not None and band[0] > math.log(1 + MARGIN):
            out.append(index)
    return out


def settled(rows: List[Row], size: int) -> bool:
    """Whether more rounds could change the answer: the fastest configuration (median of its passes) against
    each one with fewer workers, pass by pass within a round, is either surely more than MARGIN faster or
    surely not (a 95% band of the mean log ratio, Student's t)."""
    if not rows:
        return True
    rates = _pass_rates(rows, size)
    top = _top(rates)
    threshold = math.log(1 + MARGIN)
    for index, row in enumerate(rows):
        if row["workers"] >= rows[top]["workers"]:
            continue
        band = _band(rates[top], rates[index], RETIRE_AFTER)
        if band is not None and band[0] > threshold:  # decided (and retired): surely slower
            continue
        band = _band(rates[top], rates[index])
        if band is None or band[0] <= threshold <= band[1]:
            return False
    return True


def kept(timed: Row) -> Row:
    """A pass as it goes into the JSON."""
    return {k: timed[k] for k in KEPT if k in timed}
