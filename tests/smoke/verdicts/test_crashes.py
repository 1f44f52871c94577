"""verdicts/crashes.py and verdicts/budget.py: a phase that raised in the environment names the fix its
message points at; a run stopped at the budget and checks left out for lack of time say so."""

from __future__ import annotations

from envguard.smoke import wire
from envguard.smoke.verdicts import budget, crashes


def test_crashes_carry_the_fix_their_message_points_at() -> None:
    assert (
        "--shm-size"
        in crashes.crash("x", "RuntimeError: DataLoader worker is killed by signal: Bus error.").fix
    )
    assert "ulimit -n" in crashes.crash("x", "RuntimeError: received 0 items of ancdata").fix
    assert "module level" in crashes.crash("x", "AttributeError: Can't pickle local object").fix
    assert "num_workers=0" in crashes.crash("x", "ValueError: bad sample").fix
    measured = wire.parse({"errors": [{"phase": "gpu", "error": "RuntimeError: CUDA error"}]}, "test")
    (found,) = crashes.phase_errors(measured.errors)
    assert (found.category, found.check, found.status) == ("gpu phase", "crash", "FAIL")


def test_budget_findings() -> None:
    measured = wire.parse({"pipeline_skipped": [{"phase": "memory", "needs_s": 3.0, "left_s": 1.2}]}, "test")
    (skipped,) = budget.skipped_checks(measured.pipeline_skipped)
    assert skipped.check == "memory check" and "needs about 3.0 s and 1.2 s" in skipped.evidence
    assert budget.stopped(None) == [] and measured.stopped is None  # only envguard marks a run stopped
