"""The watched job as a process: its output forwarded as it comes, its pauses told; its exit status as a shell
reports it."""

from __future__ import annotations

import signal
import subprocess
import sys

from envguard.watch.job import exit_status, pump


def test_job_output_is_forwarded_as_it_comes_and_quiet_is_told() -> None:
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

    class Sink:
        def __init__(self) -> None:
            self.chunks: list[bytes] = []
            self.quiet = 0

        def write(self, data: bytes) -> None:
            self.chunks.append(data)

        def idle(self) -> None:
            self.quiet += 1

    sink = Sink()
    assert job.stdout is not None
    pump(job.stdout, sink).join(10)
    job.wait()
    assert b"".join(sink.chunks) == b"start\n\r0/3\r1/3\r2/3\nend\n"  # every byte, in order, unchanged
    assert sink.quiet >= 2  # the 0.2 s pauses between the bar's steps


def test_a_signal_is_reported_as_128_plus_its_number() -> None:
    assert exit_status(0) == 0 and exit_status(3) == 3
    assert exit_status(-signal.SIGINT) == 130 and exit_status(-signal.SIGKILL) == 137
