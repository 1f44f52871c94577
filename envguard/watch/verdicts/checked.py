"""Watch's verdict on advice it applied and measured (pure): the rates of the slices run with the current
setting and with the advised one, against the gain the model predicted."""

from __future__ import annotations

from statistics import median

from envguard.watch.records import SliceRun
from envguard.watch.result import Checked, Verdict

AGREES = 0.25  # a predicted gain within this share of the measured one holds (issue 40's bench criterion)


def _rates(values: tuple[float, ...]) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


def judge_checked(
    change: str,
    current: tuple[float, ...],
    advised: tuple[float, ...],
    predicted: float | None,
    slices: tuple[SliceRun, ...] = (),
) -> Checked:
    """The medians of both sides' slice rates (batches/s), the measured gain and what it says of the
    prediction: below 1.0 the advice did not hold (keep the current setting); else it holds where the
    prediction is within AGREES of it, or helps more or less than predicted."""
    if not current or not advised:
        side = "current" if not current else "advised"
        return not_checked(f"the {side} setting's slices measured no steady batches", slices, change)
    now, new = median(current), median(advised)
    if now <= 0:
        return not_checked("the current setting's slices measured no steady batches", slices, change)
    gain = new / now
    overlap = min(advised) <= max(current) if gain >= 1.0 else min(current) <= max(advised)
    figures = (
        f"{change} measured {gain:.2f}x ({now:.1f} -> {new:.1f} batches/s, medians of "
        f"{_rates(current)} and {_rates(advised)})"
    )
    said = f" against {predicted:.2f}x predicted" if predicted is not None else ""
    spread = "; the slices overlap: within run-to-run noise" if overlap else ""
    verdict: Verdict
    if gain < 1.0:
        verdict, text = (
            "contradicts",
            f"the advice did not hold here: {figures}{said}; keep the current setting",
        )
    elif predicted is None:
        verdict, text = "helps", f"checked: {figures}"
    elif abs(predicted / gain - 1.0) <= AGREES:
        verdict, text = "holds", f"checked, the advice holds: {figures}{said}"
    elif predicted > gain:
        verdict, text = "smaller", f"checked, it helps less than predicted: {figures}{said}"
    else:
        verdict, text = "larger", f"checked, it helps more than predicted: {figures}{said}"
    return Checked(
        verdict,
        text + spread,
        change=change,
        current_rates=current,
        advised_rates=advised,
        current_rate=round(now, 3),
        advised_rate=round(new, 3),
        measured_gain=round(gain, 3),
        predicted_gain=predicted,
        overlap=overlap,
        slices=slices,
    )


def not_checked(why: str, slices: tuple[SliceRun, ...] = (), change: str = "") -> Checked:
    """The one line saying why --apply-and-measure could not check the advice."""
    return Checked("not checked", f"not checked: {why}", change=change, slices=slices)
