"""Benchmark `envguard watch`'s live display against the job's output (issue 28, finding 12): a job writing
--mb MB to its terminal, alone and under `envguard watch --no-hook`, on a real pseudo-terminal (the live
display only runs on one), interleaved, --runs each; medians of wall time and the ratio watched/alone.

Two shapes of output: `lines` (80-byte lines) and `noeol` (no line break at all, the case that was quadratic).
Before issue 28: 5 MB of lines 0.3 s alone, 92 s watched; 32 MB without line breaks 13.9 s. Target: watched
within 1.2x of the job alone at 100 MB. The watched time includes envguard's own start, first sample and
report, measured apart with an empty job and also shown subtracted.

Usage: python scripts/bench/bench_watch_output.py [--mb 100] [--runs 3] [--shapes lines,noeol]
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import statistics
import sys
import tempfile
import time
from pathlib import Path

JOB = """
import sys
shape, mb = sys.argv[1], int(sys.argv[2])
line = b"x" * 79 + b"\\n" if shape == "lines" else b"y" * 80
block = line * 13107  # about 1 MiB
out = sys.stdout.buffer
left = mb << 20
while left > 0:
    out.write(block[:left])
    left -= len(block)
out.flush()
"""


def on_a_terminal(argv: list[str]) -> tuple[float, int]:
    """Run `argv` on a fresh pseudo-terminal, draining it as a terminal would: (wall seconds, bytes shown)."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    shown = 0
    while True:
        select.select([fd], [], [], 1.0)
        try:
            data = os.read(fd, 1 << 20)
        except OSError:
            break
        if not data:
            break
        shown += len(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv}: exit {os.waitstatus_to_exitcode(status)}")
    return wall, shown


def _fixed_start(runs: int) -> float:
    """What `envguard watch` adds whatever the job writes: its start, first sample and report (medians of an
    empty job, watched minus alone)."""
    empty = [sys.executable, "-c", "pass"]
    watched = [sys.executable, "-m", "envguard", "watch", "--no-hook", "--interval", "1", "--", *empty]
    alone_s = statistics.median(on_a_terminal(empty)[0] for _ in range(runs))
    watched_s = statistics.median(on_a_terminal(watched)[0] for _ in range(runs))
    return watched_s - alone_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shapes", default="lines,noeol")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        job = Path(work) / "job.py"
        job.write_text(JOB)
        print(f"load before: {os.getloadavg()[0]:.2f}; {args.mb} MB per run, {args.runs} runs, interleaved")
        start_cost = _fixed_start(args.runs)
        print(f"envguard watch's own start and report (an empty job, watched - alone): {start_cost:.2f} s")
        for shape in args.shapes.split(","):
            alone = [sys.executable, str(job), shape, str(args.mb)]
            watched = [
                sys.executable,
                "-m",
                "envguard",
                "watch",
                "--no-hook",
                "--interval",
                "1",
                "--",
                *alone,
            ]
            times: dict[str, list[float]] = {"alone": [], "watched": []}
            for _ in range(args.runs):
                for name, argv in (("alone", alone), ("watched", watched)):
                    wall, shown = on_a_terminal(argv)
                    if shown < args.mb << 20:
                        raise SystemExit(
                            f"{name} {shape}: the terminal showed {shown} bytes, short of {args.mb} MB"
                        )
                    times[name].append(wall)
            a, w = statistics.median(times["alone"]), statistics.median(times["watched"])
            verdict = "met" if w <= 1.2 * a else "NOT met"
            print(
                f"{shape:6} alone {a:6.2f} s   watched {w:6.2f} s   ratio {w / a:4.2f}x"
                f" (target <= 1.2x: {verdict}); less the fixed start: {(w - start_cost) / a:4.2f}x"
            )
        print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
