"""Run tests again and again with busy loops spinning beside them, and count how often each passes.

    python scripts/under_load.py --runs 5 --busy 1 tests/verify/test_interrupted.py
    python scripts/under_load.py --memory 1500 tests/doctor/test_loader.py  # a 1500 MiB memory cgroup (root)

Each run says what the machine had left: its load, the least memory available while it ran and the
out-of-memory kills meanwhile, so a failure reads against the resource that ran out. A verdict that a busy
machine can change (a rate, a recommendation, a signal's timing) flakes here first; the suite's
timing-planted tests must pass every run (their verdicts have timing-free twins fed fixed records).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path
from tempfile import TemporaryDirectory

from envguard.machine import host

CGROUP = Path("/sys/fs/cgroup")


def spin() -> None:
    """A busy loop: one core's worth of CPU for as long as it lives."""
    while True:
        pass


def outcomes(report: Path) -> dict[str, str]:
    """test id -> passed / failed / skipped, from pytest's JUnit XML (a failure's message is printed)."""
    found: dict[str, str] = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        failure = case.find("failure") if case.find("failure") is not None else case.find("error")
        if failure is not None:
            found[name] = "failed"
            print(f"  {name}: {(failure.get('message') or '')[:400]}", flush=True)
        elif case.find("skipped") is not None:
            found[name] = "skipped"
        else:
            found[name] = "passed"
    return found


def memory_cgroup(mib: int) -> Path:
    """A memory cgroup of `mib` MiB for the test runs (cgroup v2 memory.max, or v1 memory.limit_in_bytes): its
    cgroup.procs file, which each run joins. Needs root."""
    name = f"envguard-under-load-{os.getpid()}"
    v2 = (CGROUP / "cgroup.controllers").is_file()
    folder = CGROUP / name if v2 else CGROUP / "memory" / name
    folder.mkdir()
    (folder / ("memory.max" if v2 else "memory.limit_in_bytes")).write_text(str(mib << 20))
    return folder / "cgroup.procs"


def watch_memory(stop: threading.Event, lowest: list[int]) -> None:
    """The least MemAvailable seen, sampled every 0.2 s until `stop`."""
    while not stop.wait(0.2):
        available = host.memory_info().available
        if available is not None:
            lowest[0] = min(lowest[0], available)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=1, help="busy loops beside the tests (one core each)")
    parser.add_argument("--memory", type=int, help="run the tests in a memory cgroup of this many MiB (root)")
    parser.add_argument("tests", nargs="+")
    args = parser.parse_args()
    try:
        procs = memory_cgroup(args.memory) if args.memory else None
    except OSError as exc:
        print(f"under_load.py: --memory {args.memory}: no memory cgroup ({exc.strerror}); run it as root")
        return 2
    loops = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for loop in loops:
        loop.start()
    tally: dict[str, Counter[str]] = {}
    try:
        with TemporaryDirectory() as folder:
            for run in range(args.runs):
                report = Path(folder) / f"run{run}.xml"
                started = time.perf_counter()
                argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore"]
                kills, lowest, stop = host.oom_kills(), [1 << 62], threading.Event()
                sampler = threading.Thread(target=watch_memory, args=(stop, lowest), daemon=True)
                sampler.start()
                subprocess.run(
                    [*argv, f"--junitxml={report}", *args.tests],
                    capture_output=True,
                    check=False,
                    preexec_fn=(lambda: procs.write_text(str(os.getpid()))) if procs else None,
                )
                stop.set()
                sampler.join()
                took = time.perf_counter() - started
                after = host.oom_kills()
                killed = after - kills if after is not None and kills is not None else "unknown"
                print(
                    f"run {run + 1}: load {os.getloadavg()[0]:.1f}, least memory available "
                    f"{lowest[0] / (1 << 30):.1f} GiB, out-of-memory kills {killed}",
                    flush=True,
                )
                for name, outcome in outcomes(report).items():
                    tally.setdefault(name, Counter())[outcome] += 1
                print(f"run {run + 1}/{args.runs}: {took:.0f} s", flush=True)
    finally:
        for loop in loops:
            loop.terminate()
        if procs is not None:
            with contextlib.suppress(OSError):  # a process of the runs still in it: left for the kernel
                procs.parent.rmdir()
    width = max(len(n) for n in tally) if tally else 0
    print(f"{'test'.ljust(width)}  passed  failed  skipped  (of {args.runs}, {args.busy} busy loop(s))")
    for name, counts in sorted(tally.items()):
        print(f"{name.ljust(width)}  {counts['passed']:6}  {counts['failed']:6}  {counts['skipped']:7}")
    return 1 if any(c["failed"] for c in tally.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
