"""interleave.py: when a pass has enough rounds, which configurations are decided, and when the measurement
may stop (pure, over crafted passes in the module's format)."""

from __future__ import annotations

from typing import Any

from envguard_smoke import interleave

SIZE = 8


def passes(workers: int, rates: list[float]) -> dict[str, Any]:
    """A row of `workers` with one pass per round at each rate (samples/s), 4 steady rounds each."""
    lanes = max(workers, 1)
    out = []
    for number, rate in enumerate(rates):
        period = lanes * SIZE / rate
        arrivals = [0.1 + period * (1 + k // lanes) for k in range(lanes * 5)]
        out.append({"round": number, "arrivals_s": arrivals, "wall_s": arrivals[-1]})
    return {"workers": workers, "passes": out}


def test_a_pass_ends_at_a_round_boundary_after_enough_steady_time() -> None:
    done = interleave.enough(2)
    assert done([0.1, 0.1, 0.2, 0.2, 0.3, 0.3, 0.4, 0.4])  # 3 steady rounds over 0.3 s
    assert not done([0.1, 0.1, 0.2, 0.2, 0.3, 0.3, 0.4])  # mid-round
    assert not done([0.1, 0.1, 0.11, 0.11, 0.12, 0.12, 0.13, 0.13])  # 3 rounds in 0.03 s: scheduler slices
    assert not done([0.1, 0.1, 0.5, 0.5, 0.9, 0.9])  # 0.8 s, but 2 steady rounds


def test_a_configuration_surely_slower_by_more_than_the_margin_is_retired() -> None:
    """0 workers at a third of 1 and 2 in every round, under load that moves all three: decided after three
    rounds and left out of the next; 1 and 2 (equal) stay."""
    load = [1.0, 0.5, 0.8]
    rows = [
        passes(0, [100 * f for f in load]),
        passes(1, [300 * f for f in load]),
        passes(2, [303 * f for f in load]),
    ]
    assert interleave.retired(rows, SIZE) == [0]
    assert interleave.settled(rows, SIZE)  # 2 over 1 is 1.01x in every round: surely under 5%
    # two common rounds already retire a configuration far slower in both (Student's t of 12.7); one does not
    assert interleave.retired([passes(0, [100, 50]), passes(1, [300, 150])], SIZE) == [0]
    assert interleave.retired([*rows[:2], passes(2, [303])], SIZE) == []


def test_a_gain_near_the_margin_keeps_the_measurement_going() -> None:
    rows = [passes(1, [300, 150, 240]), passes(2, [330, 150, 250])]  # 1.10x, 1.00x, 1.04x
    assert not interleave.settled(rows, SIZE)
    assert interleave.retired(rows, SIZE) == []


def test_rounds_rotate_their_first_configuration() -> None:
    assert [interleave.order(3, n) for n in range(4)] == [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 1, 2]]


def test_rows_retired_after_two_rounds_count_as_decided() -> None:
    """0 and 1 worker both surely slower than 2 after two rounds were left out of the third: the
    measurement is settled then, not run to MAX_PASSES on 2 alone (it was, in test_sweep under load)."""
    rows = [passes(0, [90, 79]), passes(1, [89, 84]), passes(2, [187, 162, 174])]
    assert interleave.retired(rows, SIZE) == [0, 1]
    assert interleave.settled(rows, SIZE)
