"""Benchmark decoding the smoke module's output line, side by side with its floor, in one run.

    python scripts/bench/bench_smoke_wire.py [--runs 41] [--rows 16] [--batches 400]

Builds one output as the in-environment module prints it for a long run (two synthetic datasets and the
user's, `--rows` configurations each with `--batches` arrival and wait times, the seeded determinism runs
with 64 samples over two epochs each, the GPU phase, the user's pipeline), then times, interleaved
round-robin, the decoder envguard uses (`measured.decode`: msgspec into the Structs, every field checked)
and the floor, `json.loads` of the same text (no records, nothing checked). Where the tree still has the
hand-written reader (`envguard.smoke.wire`, before issue 38) it is timed instead, as `json.loads` +
`wire.parse`: run the script on both trees and compare each decoder's ratio to the floor.
Prints a Markdown table of medians and ratios to the floor.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from envguard.smoke import measured


def _row(workers: int, batches: int) -> dict[str, Any]:
    return {
        "workers": workers,
        "pin_memory": False,
        "persistent_workers": False,
        "batch_size": 32,
        "batches": batches,
        "batch_bytes": 98_304,
        "arrivals_s": [0.05 + 0.01 * i for i in range(batches)],
        "waits_s": [0.001 * (i % 7) for i in range(batches)],
        "epoch2_first_batch_s": 0.2,
        "wall_s": 4.1,
        "main_cpu_s": 1.2,
        "step_s": 0.0,
        "others_cpu_fraction": 0.1,
        "throttled_fraction": 0.0,
        "psi_some_fraction": 0.02,
    }


def _observation(i: int) -> dict[str, Any]:
    return {"w": i % 2, "id": f"index:{i}", "f": {"0": "ab" * 8, "1": "cd" * 8}}


def output(rows: int, batches: int) -> str:
    """One module output of a long run (the module prints it with sorted keys)."""
    seeded = {
        "workers": 2,
        "persistent": False,
        "epochs": [[_observation(i) for i in range(64)] for _ in range(2)],
        "order_digests": ["aa" * 32, "bb" * 32],
        "stream_digests": ["cc" * 32, "dd" * 32],
        "seconds": 0.8,
    }
    data = {
        "python": "3.11.7",
        "executable": "/env/bin/python",
        "torch": "2.13.0+cpu",
        "device": "cpu",
        "start_method": "fork",
        "errors": [],
        "throughput": [
            {
                "name": name,
                "nominal_latency_ms": 10.0,
                "length": 4096,
                "rows": [_row(w, batches) for w in range(rows)],
            }
            for name in ("io", "cpu", "user")
        ],
        "determinism": {
            "dataset": "augmented",
            "seed": 1234,
            "batch_size": 8,
            "limit": 64,
            "runs": {name: seeded for name in ("w0", "w0-repeat", "wN", "wN-repeat", "wN-persistent", "w1")},
            "skipped": [],
        },
        "phase_seconds": {"start-up": 1.5, "determinism": 2.0, "throughput": 9.0},
        "memory_limit": {"limit_bytes": None, "peak_bytes": 900_000_000, "startup_bytes": 250_000_000},
        "start_method_safety": {"method": "fork", "checked": ["dataset"], "problems": []},
    }
    return json.dumps(data, sort_keys=True)


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--batches", type=int, default=400)
    args = parser.parse_args()
    text = output(args.rows, args.batches)
    cases: dict[str, Callable[[], object]] = {"json.loads (floor)": lambda: json.loads(text)}
    if hasattr(measured, "decode"):
        cases["measured.decode (msgspec)"] = lambda: measured.decode(text, "bench")
    try:  # the hand-written reader, where this tree still has it (run the script on the tree before issue 38)
        wire: Any = importlib.import_module("envguard.smoke.wire")
        cases["json.loads + wire.parse (hand)"] = lambda: wire.parse(json.loads(text), "bench")
    except ImportError:
        pass
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, action in cases.items():
            times[name].append(timed(action))
    floor = statistics.median(times["json.loads (floor)"])
    print(f"{len(text) / 1e6:.2f} MB line, {args.runs} runs, interleaved\n")
    print("| decoder | median ms | x floor |\n| --- | ---: | ---: |")
    for name, found in times.items():
        median = statistics.median(found)
        print(f"| {name} | {median * 1000:.2f} | {median / floor:.2f} |")


if __name__ == "__main__":
    main()
