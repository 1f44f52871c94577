"""`envguard watch --apply-and-measure` on a real job: the advice is run against the current setting in
interleaved slices, both rates are reported beside the predicted gain, the override reached the loader, each
slice's workers are gone after it, and where nothing can be checked it says why in one line."""

from __future__ import annotations

import statistics
import sys

import psutil
import pytest

from tests.watch.helpers import Watch, run_envguard

# 4 samples x 5 ms asleep per batch, loaded in the main process, then a 5 ms step: input-bound, in-main
SLEEPY = ("--workers", "0", "--batches", "400", "--sleep-ms", "5", "--step-ms", "5")


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.slow  # a watch and four slices of a torch job: about 100 s on a busy 2-core machine
def test_the_advised_workers_are_measured_against_num_workers_0(watch: Watch) -> None:
    watched = watch(*SLEEPY, extra=("--apply-and-measure", "2"))
    assert watched.code == 0, watched.stderr
    rec, checked = watched.diagnosis["recommendation"], watched.diagnosis["checked"]
    assert rec["setting"] == "num_workers" and rec["value"] > 0, rec
    assert checked["verdict"] != "not checked", checked["text"]
    slices = checked["slices"]
    assert [s["side"] for s in slices] == ["current", "advised", "advised", "current"]
    assert len(checked["current_rates"]) == len(checked["advised_rates"]) == 2
    assert checked["current_rate"] == pytest.approx(statistics.median(checked["current_rates"]), abs=1e-3)
    # loading overlapped with the step in workers: clearly faster than loading between the steps
    assert checked["advised_rate"] > checked["current_rate"] and checked["measured_gain"] > 1.0
    assert checked["predicted_gain"] == rec["expected_speedup"]
    assert f"{checked['measured_gain']:.2f}x" in checked["text"] and "predicted" in checked["text"]
    for done in slices:
        assert done["ended"] == "slice" and done["exit_code"] == 0 and not done["error"], done
        assert done["lingering"] == [] and all(_gone(pid) for pid in done["workers"]), done
        if done["side"] == "advised":  # the hook's own reading of the loader: the override reached it
            assert done["settings"]["num_workers"] == rec["value"] and done["applied_to"] == 1
            assert len(done["workers"]) == rec["value"]
        else:
            assert done["settings"]["num_workers"] == 0 and done["applied_to"] == 0 and not done["workers"]
    assert "--apply-and-measure: slice 4 of 4, current" in watched.stderr


def test_without_advice_it_says_why_in_one_line(watch: Watch) -> None:
    watched = watch(command=(sys.executable, "-c", "print('no torch here')"), extra=("--apply-and-measure",))
    assert watched.code == 0, watched.stderr
    checked = watched.diagnosis["checked"]
    assert checked["verdict"] == "not checked" and checked["slices"] == []
    assert checked["text"] == "not checked: there is no advice to check (no loader timing)"


def test_options_it_cannot_go_with_are_one_line_and_exit_2() -> None:
    for argv, words in (
        (("--apply-and-measure", "--pid", "1"), "not with --pid or --no-hook"),
        (("--apply-and-measure", "5", "--no-hook", "--", sys.executable, "-c", "pass"), "--no-hook"),
        (("--apply-and-measure", "0", "--", sys.executable, "-c", "pass"), "--apply-and-measure 0"),
        (("--apply-and-measure", "inf", "--", sys.executable, "-c", "pass"), "more than 0"),
    ):
        done = run_envguard("watch", *argv)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("envguard: error: ") and words in lines[0], lines
