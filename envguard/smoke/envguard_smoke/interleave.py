"""Interleaved measurement of DataLoader configurations (pure: stdlib only, no clock, no torch).

Each configuration's row holds passes: a fresh iterator timed over its round 0 (start-up) and a few steady
rounds. A round runs one pass of every configuration, in an order rotated from round to round, so load that
comes and goes between rounds moves them alike; envguard compares them pass by pass within a round. Rounds
repeat until the answer cannot change (`settled`) or the time ends.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

PASS_ROUNDS = 3  # steady rounds per pass, after its round 0 (the start-up)
MIN_PASS_S = 0.3  # a later pass's steady part lasts at least this long (shorter is mostly timer noise)
MOST_ROUNDS = 16  # steady rounds per pass at most
MIN_PASSES = 3  # rounds of passes before the measurement may stop early
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


def steady_rounds(passes: List[Row], lanes: int) -> int:
    """Steady rounds for the next pass: PASS_ROUNDS at first, then enough for MIN_PASS_S."""
    per_round = round_s(passes, lanes)
    if per_round is None:
        return PASS_ROUNDS
    return max(PASS_ROUNDS, min(MOST_ROUNDS, math.ceil(MIN_PASS_S / max(per_round, 1e-6))))


def pass_cost(passes: List[Row], lanes: int, steady: int) -> float:
    """Wall seconds the next pass is expected to take: the last one's start-up and round 0, then `steady`
    rounds (0.0 before any pass)."""
    last = passes[-1] if passes else None
    if last is None or not last["arrivals_s"]:
        return 0.0
    per_round = round_s(passes, lanes) or float(last["wall_s"])
    first_round = float(last["arrivals_s"][min(lanes, len(last["arrivals_s"])) - 1])
    return first_round + steady * per_round


def pass_rate(timed: Row, lanes: int, size: int) -> Optional[float]:
    """Samples/s of one pass from its round ends after round 0 (a quick figure for stopping early; envguard
    fits its own from the arrivals)."""
    per_round = round_s([timed], lanes)
    return lanes * size / per_round if per_round else None


def settled(rows: List[Row], size: int) -> bool:
    """Whether more rounds could change the answer: the fastest configuration (median of its passes) against
    each one with fewer workers, pass by pass within a round, is either surely more than MARGIN faster or
    surely not (a 95% band of the mean log ratio, Student's t)."""
    rates: List[Dict[int, float]] = []
    for row in rows:
        lanes = max(row["workers"], 1)
        mine = {p["round"]: pass_rate(p, lanes, size) for p in row.get("passes") or []}
        rates.append({k: v for k, v in mine.items() if v})
    if not rows:
        return True
    medians = [sorted(r.values())[len(r) // 2] if r else 0.0 for r in rates]
    top = max(range(len(rows)), key=lambda i: medians[i])
    threshold = math.log(1 + MARGIN)
    for index, row in enumerate(rows):
        if row["workers"] >= rows[top]["workers"]:
            continue
        common = sorted(set(rates[top]) & set(rates[index]))
        logs = [math.log(rates[top][k] / rates[index][k]) for k in common]
        if len(logs) < MIN_PASSES:
            return False
        mean = sum(logs) / len(logs)
        sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
        half = T_975.get(len(logs) - 1, 2.0) * sd / math.sqrt(len(logs))
        if mean - half <= threshold <= mean + half:
            return False
    return True


def kept(timed: Row) -> Row:
    """A pass as it goes into the JSON."""
    return {k: timed[k] for k in KEPT if k in timed}
