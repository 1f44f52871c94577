"""Benchmark `envguard lock` of a live 300-package environment, side by side with its floors, in one run.

    python scripts/bench/bench_lock.py [--runs 11] [--packages 300] [--work DIR]

Builds the prefix exactly as bench_snapshot.py does, then times, interleaved round-robin, each as a fresh
subprocess: `envguard lock PREFIX --no-probe -o FILE` (exact installed set, no solving), `envguard lock
PREFIX` (plus the fingerprint probe, which imports numpy and torch inside the environment's interpreter), the
json-load floor and `python -c pass`. Target: lock of a live 300-package environment under 0.5 s. For
reference, conda 26.7 takes ~740 ms for `conda env export` on such an environment
(../shared/reference/conda-outputs/README.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_snapshot import FLOOR, bench_env, build_prefix, measure


def commands(prefix: Path, work: Path) -> dict[str, list[str]]:
    bindir = Path(sys.executable).parent
    envguard = shutil.which("envguard", path=str(bindir)) or str(bindir / "envguard")
    floor = work / "floor.py"
    floor.write_text(FLOOR)
    return {
        "envguard lock PREFIX --no-probe": [
            envguard,
            "lock",
            str(prefix),
            "--no-probe",
            "-o",
            str(work / "a.yml"),
        ],
        "envguard lock PREFIX (with fingerprint probe)": [
            envguard,
            "lock",
            str(prefix),
            "-o",
            str(work / "b.yml"),
        ],
        "floor: json-load every conda-meta/*.json": [sys.executable, str(floor), str(prefix / "conda-meta")],
        "python -c pass": [sys.executable, "-c", "pass"],
    }


def report(times: dict[str, list[float]], packages: int) -> str:
    med = {name: statistics.median(values) for name, values in times.items()}
    floor = med["floor: json-load every conda-meta/*.json"]
    rows = [
        f"Prefix: {packages} conda packages; {len(next(iter(times.values())))} runs each, interleaved; "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs.",
        "",
        "| command | median (ms) | min (ms) | / json-load floor |",
        "|---|---:|---:|---:|",
    ]
    for name, values in times.items():
        rows.append(
            f"| `{name}` | {med[name] * 1000:.1f} | {min(values) * 1000:.1f} | {med[name] / floor:.2f}x |"
        )
    lock = med["envguard lock PREFIX --no-probe"]
    rows += [
        "",
        f"- lock of a live environment = {lock * 1000:.0f} ms (target < 500 ms): "
        f"{'met' if lock < 0.5 else 'MISSED'}",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--packages", type=int, default=300, help="extra packages besides python/numpy/pip")
    parser.add_argument("--work", type=Path, help="reuse this folder (default: a temp folder, removed after)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-lock-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        prefix = build_prefix(work, args.packages)
        env = bench_env(work / "cache")
        count = sum(1 for n in os.listdir(prefix / "conda-meta") if n.endswith(".json"))
        print(report(measure(commands(prefix, work), args.runs, env), count))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
