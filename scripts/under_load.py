"""Run tests again and again with busy loops spinning beside them, and count how often each passes.

    python scripts/under_load.py --runs 5 --busy 1 tests/verify/test_interrupted.py

A verdict that a busy machine can change (a rate, a recommendation, a signal's timing) flakes here first; the
suite's timing-planted tests must pass every run (their verdicts have timing-free twins fed fixed records).
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path
from tempfile import TemporaryDirectory


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=1, help="busy loops beside the tests (one core each)")
    parser.add_argument("tests", nargs="+")
    args = parser.parse_args()
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
                subprocess.run([*argv, f"--junitxml={report}", *args.tests], capture_output=True, check=False)
                took = time.perf_counter() - started
                for name, outcome in outcomes(report).items():
                    tally.setdefault(name, Counter())[outcome] += 1
                print(f"run {run + 1}/{args.runs}: {took:.0f} s", flush=True)
    finally:
        for loop in loops:
            loop.terminate()
    width = max(len(n) for n in tally) if tally else 0
    print(f"{'test'.ljust(width)}  passed  failed  skipped  (of {args.runs}, {args.busy} busy loop(s))")
    for name, counts in sorted(tally.items()):
        print(f"{name.ljust(width)}  {counts['passed']:6}  {counts['failed']:6}  {counts['skipped']:7}")
    return 1 if any(c["failed"] for c in tally.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
