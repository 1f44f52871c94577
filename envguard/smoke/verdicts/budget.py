"""The --budget (pure): a run stopped at the budget, and pipeline checks the time left could not fit."""

from __future__ import annotations

from collections.abc import Sequence

from envguard.findings import Finding
from envguard.smoke.measured import Stopped
from envguard.smoke.measured_pipeline import SkippedCheck

CATEGORY = "budget"


def stopped(stop: Stopped | None) -> list[Finding]:
    """An INFO when envguard stopped the module at the budget: the measurement could not finish, which says
    nothing against the data; the other verdicts use what it had by then."""
    if stop is None:
        return []
    return [
        Finding(
            CATEGORY,
            "finished within --budget",
            "INFO",
            f"the measurement could not finish: stopped at the budget during {stop.phase or 'start-up'} "
            f"after {stop.after_s} s (a slow or busy machine); the verdicts below use what was "
            "measured by then",
            "give a larger --budget, fewer --workers, or rerun on an idle machine",
        )
    ]


def skipped_checks(skipped: Sequence[SkippedCheck]) -> list[Finding]:
    """An INFO per pipeline check (memory, cross-process, start-up) left out for lack of time."""
    return [
        Finding(
            CATEGORY,
            f"{s.phase} check",
            "INFO",
            f"not run: it needs about {s.needs_s} s and {s.left_s} s of the --budget were left for it",
            "give a larger --budget (e.g. --budget 40)",
        )
        for s in skipped
    ]
