"""Benchmark issue 27's advice on four real training pipelines (scripts/bench/pipelines.py): does the setting
watch recommends land within 10% of the best of a sweep over 0, 1, 2, 4 and 8 workers, and does the gain
it predicts hold (within +-25%) when the recommendation is applied? And do smoke and doctor agree with it?

For each pipeline (imagenet-shaped CPU step, a JPEG ImageFolder decoded with PIL, a sleeping loader, an
already tuned loader):
1. `envguard watch --json` on the job at its starting setting: the recommended num_workers, the predicted gain
   and the rule (the diagnosis' `recommendation`), and the step the hook measured;
2. the job timed at 0, 1, 2, 4, 8 workers and at the recommended setting, in 5 interleaved rounds inside one
   process (torch imported once, the order rotated each round): medians per setting;
3. `envguard smoke ENV --loader pipelines.py:make_loader --step-ms STEP --step-cores CORES` (no --sweep): the
   model's worker advice from the per-sample profile beside the step watch measured (its wall time and the
   cores it kept busy); `envguard doctor ENV --loader ... --step-ms STEP --step-cores CORES` the same from
   its own profile; and doctor's num_workers ceiling without --loader.

Usage: python scripts/bench/bench_pipeline_advice.py [--rounds 5] [--batches 40] [--only NAME] [--busy]
(`--busy` keeps one core busy with another process meanwhile). Where watch advises the step fewer intra-op
threads (torch.set_num_threads(K)), the sweep also times 0, 1 and 2 workers with K threads: `threads_vs_best`
is the best of those over the best of the sweep as written. Figures go to docs/PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PIPELINES = Path(__file__).resolve().parent / "pipelines.py"
START = {"imagenet": 0, "jpeg": 1, "sleep": 1, "tuned": 2}
WATCHED = {"imagenet": 600, "jpeg": 200, "sleep": 150, "tuned": 40}  # batches: a few seconds of steady loop
SWEEP = (0, 1, 2, 4, 8)


def jpegs(folder: Path, count: int = 240) -> None:
    """Real JPEGs (PIL, quality 90) in two class folders, 160-224 px: what an ImageFolder reads."""
    from PIL import Image

    rng = random.Random(0)
    for i in range(count):
        sub = folder / f"class_{i % 2}"
        sub.mkdir(parents=True, exist_ok=True)
        side = rng.randrange(160, 225)
        pixels = bytes(rng.randrange(256) for _ in range(48)) * (side * side * 3 // 48 + 1)
        Image.frombytes("RGB", (side, side), pixels[: side * side * 3]).save(sub / f"{i}.jpg", quality=90)


@contextlib.contextmanager
def busy_core(wanted: bool) -> Iterator[None]:
    """Another process spinning on one core while the block runs (--busy)."""
    if not wanted:
        yield
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def watch(name: str, env: dict[str, str], batches: int, out: Path) -> dict[str, Any]:
    """watch's diagnosis of the job at its starting setting."""
    job = [sys.executable, str(PIPELINES), "--pipeline", name, "--workers", str(START[name])]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envguard",
            "watch",
            "--json",
            "-o",
            str(out),
            "--",
            *job,
            "--batches",
            str(batches),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    report = json.loads(out.read_text()) if out.is_file() else {}
    if done.returncode != 0 or not report:
        raise SystemExit(f"watch failed on {name}: {done.stderr[-400:]}")
    return report


def sweep(
    name: str, env: dict[str, str], counts: list[str], rounds: int, batches: int, extra: list[str]
) -> dict[str, list[float]]:
    """Batches/s per worker count (`N`, or `N@T` with T intra-op threads) over interleaved rounds, in one
    process."""
    args = [sys.executable, str(PIPELINES), "--pipeline", name, "--workers", ",".join(counts)]
    done = subprocess.run(
        [*args, "--rounds", str(rounds), "--batches", str(batches), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    if done.returncode != 0:
        raise SystemExit(f"sweep failed on {name}: {done.stderr[-400:]}")
    rates: dict[str, list[float]] = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        key = f"{row['workers']}@{row['threads']}" if row.get("threads") else str(row["workers"])
        rates.setdefault(key, []).append(row["batches_per_s"])
    return rates


def advised_threads(diagnosis: dict[str, Any]) -> int | None:
    """The intra-op threads watch's step-threads finding advises (torch.set_num_threads(K)), if any."""
    for finding in diagnosis.get("findings", []):
        if finding.get("check") == "intra-op threads" and "set_num_threads(" in finding.get("fix", ""):
            return int(finding["fix"].split("set_num_threads(")[1].split(")")[0])
    return None


def smoke(name: str, env: dict[str, str], step_ms: float, step_cores: float, out: Path) -> int | None:
    """The num_workers smoke's model advises for the loader beside the step watch measured (its wall time
    and the cores it kept busy)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envguard",
            "smoke",
            sys.prefix,
            "--budget",
            "40",
            "--step-ms",
            f"{step_ms:.1f}",
            "--step-cores",
            f"{step_cores:.2f}",
            "--loader",
            f"{PIPELINES}:make_loader",
            "--json",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=dict(env, BENCH_PIPELINE=name, BENCH_WORKERS=str(START[name])),
        timeout=600,
    )
    if not out.is_file():
        print(f"  smoke failed on {name}: {done.stderr[-300:]}")
        return None
    found = [f for f in json.loads(out.read_text())["findings"] if f["check"] == "worker advice (model)"]
    if not found:
        return None
    fix = found[0]["fix"]
    return int(fix.split("num_workers=")[1].split(",")[0].split(")")[0])


def doctor_ceiling(env: dict[str, str]) -> int:
    done = subprocess.run(
        [sys.executable, "-m", "envguard", "doctor", sys.prefix, "--no-hashes", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return int(json.loads(done.stdout)["recommended_workers"])


def doctor(name: str, env: dict[str, str], step_ms: float, step_cores: float) -> int | None:
    """The num_workers `doctor --loader` gives the loader beside the step watch measured (the same model as
    smoke's, from doctor's own profile of the dataset)."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "envguard", "doctor", sys.prefix, "--no-hashes", "--json"),
            *("--loader", f"{PIPELINES}:make_loader"),
            *("--step-ms", f"{step_ms:.1f}", "--step-cores", f"{step_cores:.2f}"),
        ],
        capture_output=True,
        text=True,
        env=dict(env, BENCH_PIPELINE=name, BENCH_WORKERS=str(START[name])),
        timeout=600,
    )
    try:
        return int(json.loads(done.stdout)["loader"]["advice"]["setting"]["num_workers"])
    except (ValueError, KeyError, TypeError):
        print(f"  doctor failed on {name}: {done.stderr[-300:]}")
        return None


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def bench(name: str, env: dict[str, str], args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    report = watch(name, env, WATCHED[name], tmp / f"watch-{name}.json")
    diagnosis = report["diagnosis"]
    rec = diagnosis.get("recommendation") or {}
    start = START[name]
    value = rec.get("value") if rec.get("setting") == "num_workers" else start
    recommended = int(value if value is not None else start)
    predicted = float(rec.get("expected_speedup") or 1.0)
    loader = max(report["run"]["loaders"], key=lambda lt: lt["wait_s"] + lt["step_s"])
    step_ms = 1000 * loader["step_s"] / max(loader["batches"], 1)
    extra = []
    dataloader = rec.get("dataloader", "")
    if "persistent_workers=True" in dataloader:
        extra.append("--persistent")
    threads = advised_threads(diagnosis)
    counts = [str(n) for n in sorted(set(SWEEP) | {start, recommended})]
    counts += [f"{n}@{threads}" for n in (0, 1, 2)] if threads else []  # the thread advice, applied
    rates = sweep(name, env, counts, args.rounds, args.batches, extra)
    medians = {int(n) if n.isdigit() else n: median(r) for n, r in rates.items()}
    best_n = max((n for n in SWEEP), key=lambda n: medians[n])
    measured_gain = medians[recommended] / medians[start]
    costs = (diagnosis.get("pipeline") or {}).get("costs") or {}
    step_cores = costs["step_cpu"] / costs["step_wall"] if costs.get("step_wall") else 0.0
    smoke_n = smoke(name, env, step_ms, step_cores, tmp / f"smoke-{name}.json")
    doctor_n = doctor(name, env, step_ms, step_cores)
    return {
        "pipeline": name,
        "start": start,
        "headline": diagnosis["headline"],
        "rule": rec.get("rule", diagnosis.get("cause", "")),
        "recommended": recommended,
        "dataloader": dataloader,
        "predicted_gain": round(predicted, 3),
        "measured_gain": round(measured_gain, 3),
        "gain_error": round(measured_gain / predicted - 1, 3),
        "best": best_n,
        "rec_vs_best": round(medians[recommended] / medians[best_n], 3),
        "medians": {str(n): round(v, 2) for n, v in medians.items()},
        "threads_advised": threads,
        "threads_vs_best": (
            round(max(medians[f"{n}@{threads}"] for n in (0, 1, 2)) / medians[best_n], 3) if threads else None
        ),
        "step_ms": round(step_ms, 1),
        "step_cores": round(step_cores, 2),
        "smoke": smoke_n,
        "doctor": doctor_n,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, default=40)  # 15 read the start-up: 8 workers 0.77x
    parser.add_argument("--only", action="append", choices=sorted(START))
    parser.add_argument("--busy", action="store_true")
    args = parser.parse_args()
    print(f"uptime: {os.getloadavg()}, cpus {os.cpu_count()}, rounds {args.rounds}, batches {args.batches}")
    with tempfile.TemporaryDirectory(prefix="bench-advice-") as folder:
        tmp = Path(folder)
        jpegs(tmp / "jpegs")
        env = dict(os.environ, BENCH_JPEGS=str(tmp / "jpegs"), PYTHONPATH=str(REPO))
        print(f"doctor's num_workers ceiling: {doctor_ceiling(env)}")
        results = []
        with busy_core(args.busy):
            for name in args.only or ["imagenet", "jpeg", "sleep", "tuned"]:
                began = time.monotonic()
                result = bench(name, env, args, tmp)
                result["seconds"] = round(time.monotonic() - began, 1)
                results.append(result)
                print(json.dumps(result), flush=True)
    print()
    print(
        "| pipeline | start | watch's rule | recommended | best of sweep | rec / best | predicted | measured "
        "| error | smoke | doctor |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['pipeline']} | {r['start']} | {r['rule']} | {r['recommended']} | {r['best']} | "
            f"{r['rec_vs_best']:.2f} | {r['predicted_gain']:.2f}x | {r['measured_gain']:.2f}x | "
            f"{r['gain_error']:+.0%} | {r['smoke']} | {r['doctor']} |"
        )


if __name__ == "__main__":
    main()
