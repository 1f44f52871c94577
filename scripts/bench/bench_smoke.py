"""Benchmark `envguard smoke`: loader efficiency on the I/O-bound dataset, and the default command's wall
time.

Timed side by side, median of --runs (min and max shown; the figures of a shared machine move with its load,
so the share of CPU other processes took while each configuration ran is printed too):
- the I/O-bound synthetic dataset (each sample waits L=10 ms; 3x224x224 uint8; batch 32) with num_workers 0,
  1, 2:
  steady-state samples/s as envguard computes it (slope over complete rounds), against the ideal max(N,1)/L
- the same runs judged the naive way (all samples / all wall time, start-up included) to show what reporting
  start-up separately buys
- `python -c "import torch"` (the floor of any smoke run: the environment's interpreter must import torch)
- `envguard smoke --json` with the default budget, as a new process (target: under 30 s on 2 cores)

Usage: python scripts/bench/bench_smoke.py [--runs 3] [--batches 12] [--skip-command] Prints a Markdown table.
Targets: efficiency >= 0.9 of N/L while N <= usable CPUs; the default smoke < 30 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

LATENCY_MS, BATCH, SHAPE = 10.0, 32, (3, 224, 224)


def loader_run(workers: int, batches: int) -> dict[str, Any]:
    """One timed configuration with the in-environment module, judged by envguard's analysis."""
    from envguard.smoke.envguard_smoke.datasets import IOBound
    from envguard.smoke.envguard_smoke.throughput import measure
    from envguard.smoke.throughput import steady_rate

    lanes = max(workers, 1)
    count = lanes * max(3, batches // lanes)
    row = measure(
        IOBound(count * BATCH, LATENCY_MS, SHAPE),
        workers=workers,
        pin_memory=False,
        persistent=False,
        batch_size=BATCH,
        batches=count,
        epoch2=False,
    )
    arrivals = row["arrivals_s"]
    ideal = lanes * 1000.0 / LATENCY_MS
    steady = steady_rate(arrivals, lanes, BATCH) or 0.0
    naive = len(arrivals) * BATCH / row["wall_s"]
    return {
        "steady": steady / ideal,
        "naive": naive / ideal,
        "first": arrivals[0],
        "others": row["others_cpu_fraction"],
    }


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=REPO)
    return time.perf_counter() - started


def spread(values: list[float], fmt: str) -> tuple[str, str, str]:
    return format(statistics.median(values), fmt), format(min(values), fmt), format(max(values), fmt)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batches", type=int, default=12, help="batches per loader run (whole rounds)")
    parser.add_argument("--skip-command", action="store_true", help="skip the full `envguard smoke` runs")
    args = parser.parse_args()
    rows: list[tuple[str, ...]] = []
    for workers in (0, 1, 2):
        runs = [loader_run(workers, args.batches) for _ in range(args.runs)]
        steady = spread([r["steady"] for r in runs], ".3f")
        naive = spread([r["naive"] for r in runs], ".3f")
        first = statistics.median(r["first"] for r in runs)
        others = [r["others"] for r in runs if r["others"] is not None]
        load = f"{statistics.median(others):.0%}" if others else "-"
        ideal = max(workers, 1) * 1000.0 / LATENCY_MS
        rows.append(
            (
                f"I/O-bound, num_workers={workers}: steady-state efficiency (envguard)",
                *steady,
                f"ideal {ideal:.0f}/s; first batch {first:.2f} s; others' CPU {load}",
            )
        )
        rows.append(
            (
                f"I/O-bound, num_workers={workers}: naive efficiency (start-up averaged in)",
                *naive,
                f"ratio envguard/naive {float(steady[0]) / float(naive[0]):.2f}",
            )
        )
    python = str(Path(sys.executable))
    imports = [timed([python, "-c", "import torch"]) for _ in range(args.runs)]
    rows.append(("`python -c 'import torch'` (s)", *spread(imports, ".2f"), "floor of every smoke run"))
    if not args.skip_command:
        walls = [timed([python, "-m", "envguard", "smoke", "--json"]) for _ in range(args.runs)]
        rows.append(
            (
                "`envguard smoke --json`, default budget 25 s (s)",
                *spread(walls, ".1f"),
                f"target < 30 s; {os.cpu_count()} CPUs",
            )
        )
    print(
        f"envguard smoke benchmark: L={LATENCY_MS:g} ms per sample, batch {BATCH} of "
        f"{'x'.join(map(str, SHAPE))} "
        f"uint8, {args.runs} runs, torch {_torch_version()}, {os.cpu_count()} CPUs\n"
    )
    print("| Case | Median | Min | Max | Notes |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


def _torch_version() -> str:
    import torch

    return json.dumps(str(torch.__version__)).strip('"')


if __name__ == "__main__":
    sys.exit(main())
