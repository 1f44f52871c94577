"""Watch's verdict on advice it applied and measured: the medians of both sides' slices, the measured gain
beside the predicted one, and a measured loss said plainly."""

from __future__ import annotations

import pytest

from envguard.watch.verdicts.checked import judge_checked, not_checked

CHANGE = "DataLoader(num_workers=4, prefetch_factor=2, persistent_workers=False, pin_memory=False)"


def test_a_gain_within_a_quarter_of_the_prediction_holds() -> None:
    found = judge_checked(CHANGE, (30.0, 32.0), (118.0, 120.0), 4.13)
    assert found.verdict == "holds" and not found.overlap
    assert (found.current_rate, found.advised_rate) == (31.0, 119.0)
    assert found.measured_gain == pytest.approx(119 / 31, abs=1e-3) and found.predicted_gain == 4.13
    assert found.text.startswith("checked, the advice holds: " + CHANGE + " measured 3.84x")
    assert "(31.0 -> 119.0 batches/s, medians of 30.0, 32.0 and 118.0, 120.0) against 4.13x predicted" in (
        found.text
    )


def test_a_measured_loss_says_the_advice_did_not_hold_and_to_keep_the_current_setting() -> None:
    found = judge_checked(CHANGE, (50.0, 52.0), (40.0, 41.0), 1.8)
    assert found.verdict == "contradicts" and found.measured_gain is not None and found.measured_gain < 1.0
    assert found.text.startswith("the advice did not hold here: ")
    assert found.text.endswith("against 1.80x predicted; keep the current setting")


@pytest.mark.parametrize(
    ("advised", "predicted", "verdict"),
    [((12.0, 12.0), 2.0, "smaller"), ((40.0, 40.0), 2.0, "larger"), ((20.0, 20.0), None, "helps")],
)
def test_a_gain_far_from_the_prediction_says_which_way(
    advised: tuple[float, float], predicted: float | None, verdict: str
) -> None:
    found = judge_checked(CHANGE, (10.0, 10.0), advised, predicted)
    assert found.verdict == verdict
    assert ("predicted" in found.text) == (predicted is not None)


def test_slices_that_overlap_are_said_to_be_within_the_noise() -> None:
    found = judge_checked(CHANGE, (10.0, 13.0), (12.0, 14.0), 1.2)
    assert found.overlap and found.text.endswith("the slices overlap: within run-to-run noise")
    apart = judge_checked(CHANGE, (10.0, 11.0), (12.0, 14.0), 1.2)
    assert not apart.overlap


def test_a_side_without_rates_is_not_checked() -> None:
    found = judge_checked(CHANGE, (10.0,), (), 2.0)
    assert found.verdict == "not checked" and found.measured_gain is None
    assert found.text == "not checked: the advised setting's slices measured no steady batches"
    assert not_checked("why").text == "not checked: why"
