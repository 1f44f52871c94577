"""Benchmark `envguard watch`: its overhead on the watched loop's throughput, and the sampler's own CPU.

1. Overhead: the same training script (torch CPU DataLoader, 2 workers with CPU augmentation, a CPU step) run
   bare and under `envguard watch` (1 s interval, hook on), interleaved, --runs each. The script times its own
   steady state (batches 20..end) with perf_counter and prints batches/s; median per side, ratio watched/bare.
   Target: ratio >= 0.98 (overhead <= 2%).
2. Sampler CPU: `envguard watch --interval 1 --duration D --json` on a job with 16 DataLoader workers
   (sleep-based, nearly idle, so the tree has 17 processes); CPU seconds the sampler spent
   (WatchRun.sampler_cpu_s, measured with process_time around each sample) / watched seconds, and envguard's
   whole process CPU (psutil, includes the interpreter start and the report). Target: sampler <= 2% of one
   core.

The machine is shared: load average and the host's busy share are printed next to each figure. Usage: python
scripts/bench/bench_watch.py [--runs 5] [--batches 300] [--duration 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRAIN = """
import sys, time, torch
from torch.utils.data import DataLoader, Dataset
torch.set_num_threads(1)
workers, batches, sleep_ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])

class Data(Dataset):
    def __len__(self):
        return 10**6
    def __getitem__(self, i):
        if sleep_ms:
            time.sleep(sleep_ms / 1000)
            return torch.zeros(8)
        x = torch.rand(3, 32, 32)
        for _ in range(20):
            x = torch.flip(x, dims=[2]) * 0.999
        return x

model = torch.nn.Linear(3 * 32 * 32, 10)
start = None
for n, x in enumerate(DataLoader(Data(), batch_size=8, num_workers=workers)):
    if n == 20:
        start = time.perf_counter()
    if n >= batches:
        break
    if not sleep_ms:
        for _ in range(3):
            model(x.flatten(1)).sum().backward()
print(f"RATE {(batches - 20) / (time.perf_counter() - start):.3f}", flush=True)
"""


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def rate(command: list[str]) -> float:
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("RATE")))


def overhead(script: Path, runs: int, batches: int) -> None:
    bare = [sys.executable, str(script), "2", str(batches), "0"]
    watched = [sys.executable, "-m", "envguard", "watch", "--interval", "1", "-o", os.devnull, "--", *bare]
    rates: dict[str, list[float]] = {"bare": [], "watched": []}
    print(f"overhead: {runs} interleaved runs each, {batches} batches, before: {load()}")
    for index in range(runs):
        order = (
            (("bare", bare), ("watched", watched))
            if index % 2 == 0
            else (("watched", watched), ("bare", bare))
        )
        for name, command in order:
            rates[name].append(rate(command))
    bare_m, watched_m = statistics.median(rates["bare"]), statistics.median(rates["watched"])
    print(f"| bare | {bare_m:.2f} batches/s (min {min(rates['bare']):.2f}, max {max(rates['bare']):.2f}) |")
    print(
        f"| watched | {watched_m:.2f} batches/s (min {min(rates['watched']):.2f}, max "
        f"{max(rates['watched']):.2f}) |"
    )
    print(f"| ratio watched/bare | {watched_m / bare_m:.3f} (target >= 0.98) |   after: {load()}")


def sampler(script: Path, duration: float, runs: int) -> None:
    import psutil

    print(f"sampler: 16 workers, --interval 1, --duration {duration:g}, {runs} runs, before: {load()}")
    shares, wholes, procs = [], [], []
    for _ in range(runs):
        out = script.with_name("watch.json")
        command = [
            sys.executable,
            "-m",
            "envguard",
            "watch",
            "--interval",
            "1",
            "--duration",
            str(duration),
            "--json",
            "-o",
            str(out),
            "--",
            sys.executable,
            str(script),
            "16",
            "100000000",
            "50",
        ]
        watcher = psutil.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cpu = 0.0
        while watcher.poll() is None:
            try:
                times = watcher.cpu_times()
                cpu = times.user + times.system
            except psutil.Error:
                break
            time.sleep(0.2)
        report = json.loads(out.read_text())
        run = report["run"]
        shares.append(run["sampler_cpu_s"] / run["duration"])
        wholes.append(cpu / run["duration"])
        procs.append(max(len(s["procs"]) for s in report["samples"]))
    print(
        f"| sampler CPU / watched time | {statistics.median(shares):.2%} of one core (min {min(shares):.2%}, "
        f"max {max(shares):.2%}; {max(procs)} processes sampled) |"
    )
    print(
        f"| envguard process CPU / watched time | {statistics.median(wholes):.2%} (interpreter start, "
        "imports "
        f"and report included) |   after: {load()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--skip-overhead", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "train.py"
        script.write_text(TRAIN)
        if not args.skip_overhead:
            overhead(script, args.runs, args.batches)
        sampler(script, args.duration, max(1, args.runs // 2))


if __name__ == "__main__":
    main()
