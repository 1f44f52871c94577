"""Benchmark issue 27's "verdicts that hold under load": ten `envguard smoke --loader ... --sweep num_workers`
runs of one correct pipeline (pipelines.py's JPEG ImageFolder, 1 worker as given) while another process keeps
one core busy. Done when every run gives the same recommendation and none FAILs.

Usage: python scripts/bench/bench_smoke_stability.py [--runs 10] [--budget 28] [--pipeline jpeg] [--no-busy]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from bench_pipeline_advice import START, busy_core, jpegs  # noqa: E402  (the same pipelines and data)


def one(env: dict[str, str], budget: float, out: Path) -> dict[str, object]:
    began = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envguard",
            "smoke",
            sys.prefix,
            "--budget",
            str(budget),
            "--loader",
            f"{HERE / 'pipelines.py'}:make_loader",
            "--sweep",
            "num_workers",
            "--workers",
            "0,1,2,4",
            "--json",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=budget + 120,
    )
    report = json.loads(out.read_text()) if out.is_file() else {}
    recs = report.get("recommendations") or []
    statuses = collections.Counter(f["status"] for f in report.get("findings") or [])
    fails = [
        f"{f['check']}: {f['evidence'][:120]}" for f in report.get("findings") or [] if f["status"] == "FAIL"
    ]
    return {
        "exit": done.returncode,
        "seconds": round(time.monotonic() - began, 1),
        "recommended": recs[0]["workers"] if recs else None,
        "rule": recs[0].get("rule") if recs else None,
        "reason": recs[0].get("reason", "")[-260:] if recs else "",
        "load": round(os.getloadavg()[0], 1),
        "statuses": dict(statuses),
        "fails": fails,
        "error": "" if report else done.stderr.strip()[-200:],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--budget", type=float, default=28.0)
    parser.add_argument("--pipeline", default="jpeg", choices=sorted(START))
    parser.add_argument("--no-busy", action="store_true")
    args = parser.parse_args()
    print(
        f"uptime: {os.getloadavg()}, {args.runs} runs, budget {args.budget} s, busy core: {not args.no_busy}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-stability-") as folder:
        tmp = Path(folder)
        jpegs(tmp / "jpegs")
        env = dict(
            os.environ,
            BENCH_JPEGS=str(tmp / "jpegs"),
            BENCH_PIPELINE=args.pipeline,
            BENCH_WORKERS=str(START[args.pipeline]),
            PYTHONPATH=str(REPO),
        )
        results = []
        with busy_core(not args.no_busy):
            for run in range(args.runs):
                result = one(env, args.budget, tmp / f"smoke-{run}.json")
                results.append(result)
                print(json.dumps(result), flush=True)
    answers = collections.Counter(r["recommended"] for r in results)
    fails = sum(1 for r in results if r["fails"])
    print(f"answers: {dict(answers)}; runs with a FAIL: {fails} of {len(results)}")


if __name__ == "__main__":
    main()
