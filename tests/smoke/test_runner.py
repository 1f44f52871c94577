"""runner.py: the module's one marker line read into records, a crash quoted from stderr, and a run stopped at
the budget turned into its results so far (or, when a sample hangs, one line naming it)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envguard.errors import ProbeError
from envguard.smoke import runner
from envguard.smoke.measured import MemoryUse
from envguard.smoke.verdicts import crashes


def test_the_marker_line_is_read_into_records() -> None:
    stdout = (
        "noise from the dataset\n" + runner.MARKER + json.dumps({"python": "3.12.1", "device": "cpu"}) + "\n"
    )
    measured = runner.parse_output(stdout, "", 0, "/env/bin/python")
    assert (measured.python, measured.device, measured.refusal) == ("3.12.1", "cpu", None)


def test_a_crash_or_garbage_is_one_probe_error() -> None:
    with pytest.raises(ProbeError, match="crashed in the environment \\(Segmentation fault\\)"):
        runner.parse_output("", "loading\nSegmentation fault\n", -11, "/env/bin/python")
    with pytest.raises(ProbeError, match="printed unreadable output"):
        runner.parse_output(runner.MARKER + "{not json\n", "", 0, "/env/bin/python")
    with pytest.raises(
        ProbeError, match=r"malformed output \(Expected `str \| null`, got `int` - at `\$\.device`"
    ):
        runner.parse_output(runner.MARKER + '{"device": 1}\n', "", 0, "/env/bin/python")


def test_a_module_killed_for_memory_is_a_record_for_the_verdicts_not_a_crash() -> None:
    """SIGKILL while the cgroup's OOM killer killed (issue 28): the record says so, and the host's view of the
    run's memory is merged into the module's own when it could print."""
    use = MemoryUse(limit_bytes=1 << 30, peak_bytes=900 << 20, oom_kills=1)
    killed = runner.parse_output("", "", -9, "/env/bin/python", use)
    assert killed.memory_use == MemoryUse(limit_bytes=1 << 30, peak_bytes=900 << 20, oom_kills=1, killed=True)
    # no OOM kill counted, far from the limit: a killer outside envguard and this cgroup, named with the
    # memory (issue 45: "crashed in the environment (exit code -9); run the dataset with num_workers=0")
    with pytest.raises(ProbeError, match=r"killed \(SIGKILL\) from outside envguard .* GiB available now"):
        runner.parse_output("", "", -9, "/env/bin/python", MemoryUse(limit_bytes=8 << 30, oom_kills=0))
    printed = {"python": "3.12.1", "memory_limit": {"limit_bytes": 1 << 30, "peak_bytes": 700 << 20}}
    measured = runner.parse_output(runner.MARKER + json.dumps(printed) + "\n", "", 0, "/env/bin/python", use)
    assert measured.memory_use == MemoryUse(limit_bytes=1 << 30, peak_bytes=900 << 20, oom_kills=1)


def test_stopped_at_the_budget_keeps_the_results_so_far(tmp_path: Path) -> None:
    (tmp_path / "phase").write_text("throughput: num_workers=2, persistent_workers=False")
    (tmp_path / "partial.json").write_text(
        json.dumps({"python": "3.12.1", "device": "cpu", "throughput": []})
    )
    (tmp_path / "p4711").write_text(f"0 {time.time():.6f} 17")  # returned its sample: not hung
    measured = runner.stopped(tmp_path, budget=8.0, elapsed=8.4)
    assert measured.python == "3.12.1" and measured.stopped is not None
    assert measured.stopped.phase.startswith("throughput") and measured.stopped.after_s == 8.4
    assert measured.stopped.pending_s is None


def test_a_process_that_ran_out_of_memory_ends_the_run_as_such(tmp_path: Path) -> None:
    """A worker recorded running out of memory (heartbeat state 2) but its MemoryError never reached the
    module, which waits for that batch: envguard stops the run OOM_GRACE_S (10 s) later, not at the budget,
    and names it out of memory, not a hung sample (exit 3) or a run stopped at the budget (INFO, exit 0)."""
    (tmp_path / "phase").write_text("memory check of your dataset")
    (tmp_path / "p4711").write_text(f"2 {time.time() - 5:.6f} {960 << 20} 17")  # held 960 MiB past start-up
    (tmp_path / "p4712").write_text(f"1 {time.time() - 5:.6f} 18")  # its sibling, stopped mid-read
    waiting = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            runner.wait_for_module(
                waiting, tmp_path, timeout=600
            )  # ends after the grace, or this test times out
        assert waiting.poll() is None  # it was the record that ended the wait, not the process
    finally:
        waiting.kill()
        waiting.communicate()
    measured = runner.stopped(tmp_path, budget=8.0, elapsed=8.4)
    assert measured.stopped is None
    (error,) = measured.errors
    assert (
        error.phase == "memory check of your dataset" and "ran out of memory reading sample 17" in error.error
    )
    assert runner.ran_out(tmp_path) == [(960 << 20, "17")]
    use = MemoryUse(limit_bytes=1 << 30, peak_bytes=300 << 20, held_bytes=960 << 20)  # a worker's own count
    (finding,) = crashes.out_of_memory(use, [error.error], None)
    assert finding.status == "FAIL" and finding.evidence.startswith(
        "out of memory: the dataset (or a worker) "
    )
    assert "reached 0.94 GiB (limit 1.00 GiB)" in finding.evidence


def test_a_hung_sample_is_named_and_no_results_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "phase").write_text("determinism run w0 (num_workers=0)")
    (tmp_path / "p4711").write_text(f"1 {time.time() - 5:.6f} 5")
    with pytest.raises(ProbeError, match=r"did not return sample 5 within 5\.\d s \(determinism run w0"):
        runner.stopped(tmp_path, budget=8.0, elapsed=8.4)
    (tmp_path / "p4711").unlink()
    # nothing measured yet and no sample pending: the measurement could not finish (an INFO report, exit 0),
    # not an error about the dataset
    measured = runner.stopped(tmp_path, budget=8.0, elapsed=8.4)  # no partial.json either
    assert measured.stopped is not None and measured.stopped.phase == "determinism run w0 (num_workers=0)"
    assert measured.datasets == () and measured.refusal is None
    (tmp_path / "phase").write_text("--loader train.py:make had not returned")
    with pytest.raises(ProbeError, match="look for a wait without a timeout in that function"):
        runner.stopped(tmp_path, budget=8.0, elapsed=8.4)  # the user's own function hung
