"""The watched job as a process: its output forwarded line by line, progress bars as they stand; its exit
status as a shell reports it."""

from __future__ import annotations

import signal
import subprocess
import sys

from envguard.watch.job import exit_status, pump


def test_job_output_is_forwarded_by_line_with_progress_bars_as_they_stand() -> None:
    job = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nprint('start', flush=True)\n"
            "for i in range(3):\n    sys.stdout.write(f'\\r{i}/3'); sys.stdout.flush(); time.sleep(0.2)\n"
            "print()\nprint('end')",
        ],
        stdout=subprocess.PIPE,
    )
    got: list[tuple[str, bool]] = []
    assert job.stdout is not None
    pump(job.stdout, lambda text, complete: got.append((text, complete))).join(10)
    job.wait()
    complete = [text for text, done in got if done]
    assert complete == ["start", "2/3", "end"]  # the bar's final state is the line a terminal would show
    assert {text for text, done in got if not done} <= {"0/3", "1/3", "2/3"}


def test_a_signal_is_reported_as_128_plus_its_number() -> None:
    assert exit_status(0) == 0 and exit_status(3) == 3
    assert exit_status(-signal.SIGINT) == 130 and exit_status(-signal.SIGKILL) == 137
