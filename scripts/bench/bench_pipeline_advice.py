"""Benchmark issue 27's advice on four real training pipelines (scripts/bench/pipelines.py): does the setting
watch recommends land within 10% of the best of a sweep over 0, 1, 2, 4 and 8 workers, and does the gain
it predicts hold (within +-25%) when the recommendation is applied? And do smoke and doctor agree with it?

For each pipeline (imagenet-shaped CPU step, a JPEG ImageFolder decoded with PIL, a sleeping loader, an
already tuned loader):
1. `envguard watch --json` on the job at its starting setting: the recommended num_workers, the predicted gain
   and the rule (the diagnosis' `recommendation`), and the step the hook measured;
2. the job timed at 0, 1, 2, 4, 8 workers and at the recommended setting, in 5 interleaved rounds inside one
   process (torch imported once, the order rotated each round): medians per setting;
3. `envguard smoke ENV --loader pipelines.py:make_loader --step-ms STEP --step-cores CORES --step-threads T`
   (no --sweep): the model's advice from the per-sample profile beside the step watch measured (its wall
   time, the cores it kept busy and its intra-op threads), `@K` where it is torch.set_num_threads(K) first;
   `envguard doctor ENV --loader ... --step-ms STEP --step-cores CORES --step-threads T` the same from its
   own profile; and doctor's num_workers ceiling without --loader.

Usage: python scripts/bench/bench_pipeline_advice.py [--rounds 5] [--batches 40] [--only NAME] [--busy |
--busy-elsewhere] (`--busy` keeps one core busy with another process meanwhile, started from this session;
`--busy-elsewhere` from a session of its own, as another user's job). Where watch advises the step fewer
intra-op threads (torch.set_num_threads(K)), the sweep also times 0, 1 and 2 workers with K threads:
`threads_vs_best` is the best of those over the best of the sweep as written; watch runs again on the job
with K threads, and `then` is its num_workers advice there, measured (over the best with K threads, over
the start with K threads, and over the best as written), beside smoke's and doctor's given that step.
Figures go to docs/PERFORMANCE.md.
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
START = {"imagenet": 0, "jpeg": 1, "sleep": 1, "tuned": 2, "mnist": 0, "pyload": 0, "ioload": 2}
# batches watched: a few seconds of steady loop (mnist's step on a busy host is 0.3-1 s)
WATCHED = {"imagenet": 600, "jpeg": 200, "sleep": 150, "tuned": 40, "mnist": 40, "pyload": 150, "ioload": 100}
SWEPT = {"mnist": 12}  # batches per timed setting where the default (--batches) would take minutes
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
def busy_core(wanted: bool, elsewhere: bool = False) -> Iterator[None]:
    """Another process spinning on one core while the block runs (--busy): started from this session, or
    (--busy-elsewhere) in a session of its own, as another user's job is: with the kernel's autogroup the
    scheduler then shares the cores between the sessions first and within each second."""
    if not wanted:
        yield
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=elsewhere)
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def watch(
    name: str, env: dict[str, str], batches: int, out: Path, threads: int | None = None
) -> dict[str, Any]:
    """watch's diagnosis of the job at its starting setting (the step on `threads` intra-op threads)."""
    setting = f"{START[name]}@{threads}" if threads else str(START[name])
    job = [sys.executable, str(PIPELINES), "--pipeline", name, "--workers", setting]
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


def step_args(step: dict[str, Any]) -> list[str]:
    """--step-ms, --step-cores and --step-threads as watch measured the step."""
    args = ["--step-ms", f"{step['ms']:.1f}", "--step-cores", f"{step['cores']:.2f}"]
    return args + (["--step-threads", str(step["threads"])] if step.get("threads") else [])


def answer(findings: list[dict[str, Any]], num_workers: int | None) -> str | None:
    """The tool's answer as the sweep keys it: `@K` where it advises torch.set_num_threads(K) first, else
    the num_workers it advises."""
    threads = advised_threads({"findings": findings})
    if threads is not None:
        return f"@{threads}"
    return None if num_workers is None else str(num_workers)


def smoke(name: str, env: dict[str, str], step: dict[str, Any], out: Path) -> str | None:
    """smoke's answer for the loader beside the step watch measured (its wall time, the cores it kept busy
    and its intra-op threads): `@K` for the thread advice, else the num_workers its model advises."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "envguard", "smoke", sys.prefix, "--budget", "40"),
            *step_args(step),
            *("--loader", f"{PIPELINES}:make_loader", "--json", "-o", str(out)),
        ],
        capture_output=True,
        text=True,
        env=dict(env, BENCH_PIPELINE=name, BENCH_WORKERS=str(START[name])),
        timeout=600,
    )
    if not out.is_file():
        print(f"  smoke failed on {name}: {done.stderr[-300:]}")
        return None
    findings = json.loads(out.read_text())["findings"]
    found = [f for f in findings if f["check"] == "worker advice (model)"]
    workers = int(found[0]["fix"].split("num_workers=")[1].split(",")[0].split(")")[0]) if found else None
    return answer(findings, workers)


def doctor_ceiling(env: dict[str, str]) -> int:
    done = subprocess.run(
        [sys.executable, "-m", "envguard", "doctor", sys.prefix, "--no-hashes", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return int(json.loads(done.stdout)["recommended_workers"])


def doctor(name: str, env: dict[str, str], step: dict[str, Any]) -> str | None:
    """`doctor --loader`'s answer beside the step watch measured (the same model as smoke's, from doctor's
    own profile of the dataset): `@K` for the thread advice, else its num_workers."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "envguard", "doctor", sys.prefix, "--no-hashes", "--json"),
            *("--loader", f"{PIPELINES}:make_loader", *step_args(step)),
        ],
        capture_output=True,
        text=True,
        env=dict(env, BENCH_PIPELINE=name, BENCH_WORKERS=str(START[name])),
        timeout=600,
    )
    try:
        report = json.loads(done.stdout)
        advice = report["loader"]["advice"]
        return answer(report["findings"], int(advice["setting"]["num_workers"]) if advice else None)
    except (ValueError, KeyError, TypeError):
        print(f"  doctor failed on {name}: {done.stderr[-300:]}")
        return None


def watched_step(report: dict[str, Any]) -> dict[str, Any]:
    """The step as watch measured it: ms per batch, the cores it kept busy, its intra-op threads."""
    loader = max(report["run"]["loaders"], key=lambda lt: lt["wait_s"] + lt["step_s"])
    pipeline = report["diagnosis"].get("pipeline") or {}
    costs = pipeline.get("costs") or {}
    return {
        "ms": 1000 * loader["step_s"] / max(loader["batches"], 1),
        # the cores it wants: kept busy, plus the share its main thread waited for one (watch prints both)
        "cores": (costs["step_cpu"] + costs.get("step_delay", 0.0)) / costs["step_wall"]
        if costs.get("step_wall")
        else 0.0,
        "threads": pipeline.get("step_threads"),
    }


def slow_step_verdict() -> None:
    """`watch --duration 60` on a job whose step takes 5 s: the verdict it gives within the minute."""
    job = [sys.executable, str(PIPELINES), "--pipeline", "slowstep", "--workers", "0", "--batches", "30"]
    with tempfile.TemporaryDirectory(prefix="bench-slow-") as folder:
        out = Path(folder) / "watch.json"
        began = time.monotonic()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "envguard",
                "watch",
                "--duration",
                "60",
                "--json",
                "-o",
                str(out),
                "--",
                *job,
            ],
            capture_output=True,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
            timeout=300,
        )
        seconds = time.monotonic() - began
        diagnosis = json.loads(out.read_text())["diagnosis"] if out.is_file() else {}
    print(
        json.dumps(
            {
                "seconds": round(seconds, 1),
                "verdict": diagnosis.get("verdict"),
                "headline": diagnosis.get("headline"),
            }
        )
    )


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def bench(name: str, env: dict[str, str], args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    report = watch(name, env, WATCHED[name], tmp / f"watch-{name}.json")
    diagnosis = report["diagnosis"]
    rec = diagnosis.get("recommendation") or {}
    start = START[name]
    threads = advised_threads(diagnosis)
    value = rec.get("value") if rec.get("setting") == "num_workers" else start
    # the recommendation as a sweep key: N workers, or the start's workers with the step on K threads
    recommended = f"{start}@{threads}" if rec.get("setting") == "threads" else str(value)
    predicted = rec.get("expected_speedup", 1.0) if rec else 1.0  # None: not predicted (the thread advice)
    step = watched_step(report)
    extra = []
    dataloader = rec.get("dataloader", "")
    if "persistent_workers=True" in dataloader:
        extra.append("--persistent")
    counts = [
        str(n) for n in sorted(set(SWEEP) | {start} | ({int(value)} if "@" not in recommended else set()))
    ]
    counts += [f"{n}@1" for n in SWEEP if f"{n}@1" not in counts]  # the best of workers and threads
    then: dict[str, Any] = {}
    if threads:  # the thread advice applied, then watched again for its num_workers advice
        rewatched = watch(name, env, WATCHED[name], tmp / f"watch-{name}-threads.json", threads)
        again = rewatched["diagnosis"]
        rec2 = again.get("recommendation") or {}
        value2 = rec2.get("value") if rec2.get("setting") == "num_workers" else start
        then = {"recommended": int(value2 if value2 is not None else start), "rule": rec2.get("rule", "")}
        then["predicted_gain"] = float(rec2.get("expected_speedup") or 1.0)
        then["step"] = watched_step(rewatched)
        counts += [f"{n}@{threads}" for n in sorted({0, 1, 2, start, then["recommended"]})]
    counts = list(dict.fromkeys(counts))
    rates = sweep(name, env, counts, args.rounds, SWEPT.get(name, args.batches), extra)
    medians = {n: median(r) for n, r in rates.items()}
    best_n = max((str(n) for n in SWEEP), key=lambda n: medians[n])
    best_any = max(medians, key=lambda n: medians[n])  # over worker counts and thread counts
    measured_gain = medians[recommended] / medians[str(start)]
    smoke_n = smoke(name, env, step, tmp / f"smoke-{name}.json")
    doctor_n = doctor(name, env, step)
    if then:  # smoke and doctor given the step watch measured with K threads
        then["smoke"] = smoke(name, env, then["step"], tmp / f"smoke-{name}-threads.json")
        then["doctor"] = doctor(name, env, then["step"])
        chosen = medians[f"{then['recommended']}@{threads}"]
        then["measured_gain"] = round(chosen / medians[f"{start}@{threads}"], 3)
        then["vs_best_with_threads"] = round(chosen / max(medians[f"{n}@{threads}"] for n in (0, 1, 2)), 3)
        then["vs_best_as_written"] = round(chosen / medians[best_n], 3)
    return {
        "pipeline": name,
        "start": start,
        "headline": diagnosis["headline"],
        "rule": rec.get("rule", diagnosis.get("cause", "")),
        "recommended": recommended,
        "dataloader": dataloader,
        "predicted_gain": round(predicted, 3) if predicted is not None else None,
        "measured_gain": round(measured_gain, 3),
        "gain_error": round(measured_gain / predicted - 1, 3) if predicted else None,
        "best": best_n,
        "rec_vs_best": round(medians[recommended] / medians[best_n], 3),
        # following watch to the end (the thread advice, then its worker advice) against the best of all
        "final": (final := f"{then['recommended']}@{threads}" if then else recommended),
        "best_any": best_any,
        "final_vs_best_any": round(medians[final] / medians[best_any], 3),
        "medians": {n: round(v, 2) for n, v in medians.items()},
        "threads_advised": threads,
        "threads_vs_best": (
            round(max(medians[f"{n}@{threads}"] for n in (0, 1, 2)) / medians[best_n], 3) if threads else None
        ),
        "then": then,
        "step_ms": round(step["ms"], 1),
        "step_cores": round(step["cores"], 2),
        "step_threads": step["threads"],
        "smoke": smoke_n,
        "doctor": doctor_n,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, default=40)  # 15 read the start-up: 8 workers 0.77x
    parser.add_argument("--only", action="append", choices=sorted(START))
    parser.add_argument("--busy", action="store_true")
    parser.add_argument("--busy-elsewhere", action="store_true")
    parser.add_argument("--slow-step", action="store_true", help="only: how soon a 5 s step gets a verdict")
    args = parser.parse_args()
    if args.slow_step:
        slow_step_verdict()
        return
    print(f"uptime: {os.getloadavg()}, cpus {os.cpu_count()}, rounds {args.rounds}, batches {args.batches}")
    with tempfile.TemporaryDirectory(prefix="bench-advice-") as folder:
        tmp = Path(folder)
        jpegs(tmp / "jpegs")
        env = dict(os.environ, BENCH_JPEGS=str(tmp / "jpegs"), PYTHONPATH=str(REPO))
        print(f"doctor's num_workers ceiling: {doctor_ceiling(env)}")
        results = []
        with busy_core(args.busy or args.busy_elsewhere, elsewhere=args.busy_elsewhere):
            for name in args.only or list(START):
                began = time.monotonic()
                result = bench(name, env, args, tmp)
                result["seconds"] = round(time.monotonic() - began, 1)
                results.append(result)
                print(json.dumps(result), flush=True)
    print()
    print(
        "| pipeline | start | watch's rule | recommended | best of sweep | rec / best | predicted | measured "
        "| error | smoke | doctor | threads advised (best with them / best) | then: watch, smoke, doctor "
        "| final / best of workers and threads |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        threads = f"{r['threads_advised']} ({r['threads_vs_best']:.2f})" if r["threads_advised"] else "-"
        predicted = f"{r['predicted_gain']:.2f}x" if r["predicted_gain"] is not None else "not predicted"
        error = f"{r['gain_error']:+.0%}" if r["gain_error"] is not None else "-"
        then = r["then"]
        after = f"{then['recommended']}, {then['smoke']}, {then['doctor']}" if then else "-"
        print(
            f"| {r['pipeline']} | {r['start']} | {r['rule']} | {r['recommended']} | {r['best']} | "
            f"{r['rec_vs_best']:.2f} | {predicted} | {r['measured_gain']:.2f}x | "
            f"{error} | {r['smoke']} | {r['doctor']} | {threads} | {after} | "
            f"{r['final']} / {r['best_any']}: {r['final_vs_best_any']:.2f} |"
        )


if __name__ == "__main__":
    main()
