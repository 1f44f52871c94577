"""Benchmark `envguard check --files` on a real venv (pip packages, checked against their RECORD), side by
side with its floor, in one run.

    python scripts/bench/bench_files.py [--venv .venv] [--runs 5]

Locks the venv with `envguard lock --no-probe` into a temp folder, then times, interleaved round-robin, each
as a fresh subprocess: `envguard check VENV --lock LOCK --files` and the floor, a plain single-threaded
script that reads every dist-info RECORD and hashes every file it lists (what any RECORD check must do).
Reports medians of wall and child CPU time (user+sys), their ratios, the files checked and the peak RSS of
envguard's run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR = r"""
import base64, csv, hashlib, os, sys
prefix = sys.argv[1]
count = 0
for site, dirs, _ in os.walk(os.path.join(prefix, "lib")):
    if not site.endswith("site-packages"):
        continue
    for name in sorted(os.listdir(site)):
        if not name.endswith(".dist-info"):
            continue
        with open(os.path.join(site, name, "RECORD"), newline="") as handle:
            for row in csv.reader(handle):
                if len(row) < 3 or not row[1].startswith("sha256=") or row[0].endswith(".pyc"):
                    continue
                with open(os.path.normpath(os.path.join(site, row[0])), "rb") as f:
                    digest = base64.urlsafe_b64encode(hashlib.sha256(f.read()).digest()).rstrip(b"=")
                assert digest.decode() == row[1][7:], row[0]
                count += 1
    dirs.clear()
print(count)
"""


def timed(argv: list[str]) -> tuple[float, float, str]:
    """(wall s, child CPU s, stdout) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0,):
        raise SystemExit(f"{argv[:3]} failed ({done.returncode}): {done.stdout[-300:]} {done.stderr[-300:]}")
    return wall, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--venv", default=".venv")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    venv = Path(args.venv).resolve()
    envguard = str(Path(sys.executable).parent / "envguard")
    with tempfile.TemporaryDirectory() as work:
        lock = Path(work) / "conda-lock.yml"
        subprocess.run([envguard, "lock", str(venv), "--no-probe", "-o", str(lock)], check=True)
        cases = {
            "envguard check --files": [
                envguard,
                "check",
                str(venv),
                "--lock",
                str(lock),
                "--files",
                "--json",
            ],
            "floor: read RECORDs, hash each file (1 thread)": [sys.executable, "-c", FLOOR, str(venv)],
        }
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        outputs: dict[str, str] = {}
        print(f"load before: {os.getloadavg()}")
        for _ in range(args.runs):
            for name, argv in cases.items():
                wall, cpu, out = timed(argv)
                results[name].append((wall, cpu))
                outputs[name] = out
        print(f"load after: {os.getloadavg()}")
        floor_files = int(outputs["floor: read RECORDs, hash each file (1 thread)"].strip())
        rss = (
            subprocess.run(
                ["/usr/bin/time", "-f", "%M", *cases["envguard check --files"]],
                capture_output=True,
                text=True,
            )
            .stderr.strip()
            .splitlines()[-1]
        )
    print(
        f"venv {venv}: {floor_files} hashed files listed in RECORDs; envguard peak RSS {int(rss) // 1024} MiB"
    )
    print("| run | wall median (ms) | CPU median (ms) |\n|---|---:|---:|")
    medians = {}
    for name, values in results.items():
        wall = statistics.median(v[0] for v in values) * 1000
        cpu = statistics.median(v[1] for v in values) * 1000
        medians[name] = (wall, cpu)
        print(f"| {name} | {wall:.0f} | {cpu:.0f} |")
    (ew, ec), (fw, fc) = medians.values()
    print(f"ratio envguard/floor: wall {ew / fw:.2f}, CPU {ec / fc:.2f}")


if __name__ == "__main__":
    main()
