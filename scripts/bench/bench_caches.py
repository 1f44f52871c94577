"""Which caches pay: `envguard check` of a 3,000-package prefix, this tree against another (main), in one run.

    python scripts/bench/bench_caches.py --base WORKTREE [--runs 7] [--work DIR]

Builds the prefix with synth_prefix.py (3,000 records shaped like conda's, 115 MB of conda-meta, 500
dist-infos; no payload files) and a lock of it, then times, interleaved round-robin, each as a fresh
subprocess (`python -c 'from envguard.cli.launcher import main; main()'`, the console script, and `python -m
envguard`, click's path) with PYTHONPATH set to each tree and a cache folder of its own:
  - `python -c pass` (the floor);
  - check, unchanged (the stored verdict: the pre-commit hook);
  - check, cold (a cache folder of its own, removed before each run: the first check on a machine, CI);
  - check after the lock's stat changed (touched: check's verdict misses, the environment is unchanged: the
    whole-environment cache serves it);
  - check after conda-meta/history changed (check's verdict and the whole-environment entry miss, every
    record is unchanged: the record cache serves them), on a metadata copy of the prefix so that the other
    cases' prefix stays settled;
  - the same with `ENVGUARD_RECORD_CACHE=0` (every record read again: what the record cache saves).
Prints medians of the child's CPU time (user + sys, getrusage: steadier than wall on a shared machine) and of
wall time, and the ratios the issue asks for.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth_prefix

REPO = Path(__file__).resolve().parents[2]
CONSOLE = "from envguard.cli.launcher import main; main()"


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv}: exit {done.returncode}\n{done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--base", type=Path, required=True, help="an older checkout of envguard (a git worktree) to time"
    )
    parser.add_argument("--work", type=Path, help="reuse this folder (default: a new temp folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-caches-"))
    prefix = work / "p3000"
    if not (prefix / "conda-meta").is_dir():
        synth_prefix.build(prefix, packages=3000, dists=500, payload=False)
    changing = synth_prefix.variant(prefix, work / "p3000-changing")  # its history changes before each run
    trees = {"this": REPO, "base": args.base.resolve()}
    lock = work / "lock.yml"  # each tree checks its own copy (touched before its "lock touched" runs)
    history = changing / "conda-meta" / "history"

    def env_for(tree: str, **extra: str) -> dict[str, str]:
        env = {
            **os.environ,
            "PYTHONPATH": str(trees[tree]),
            "ENVGUARD_CACHE_DIR": str(work / f"cache-{tree}"),
        }
        env.update(extra)
        return env

    if not lock.exists():
        subprocess.run(
            [sys.executable, "-m", "envguard", "lock", str(prefix), "--no-probe", "-o", str(lock)],
            env=env_for("this"),
            check=True,
        )
    py = sys.executable
    for tree in trees:
        shutil.copy2(lock, work / f"lock-{tree}.yml")

    def wipe(tree: str) -> Callable[[], None]:
        return lambda: shutil.rmtree(work / f"cache-{tree}-cold", ignore_errors=True)

    def touch(path: Path) -> Callable[[], None]:
        return lambda: os.utime(path)

    def append_history() -> None:
        with open(history, "a", encoding="utf-8") as handle:
            handle.write("# bench: a change the fingerprint sees\n")

    cases: dict[str, tuple[list[str], dict[str, str], Callable[[], None] | None]] = {
        "python -c pass": ([py, "-c", "pass"], dict(os.environ), None),
    }
    for tree in trees:
        own = work / f"lock-{tree}.yml"
        check = ["check", str(prefix), "--lock", str(own)]
        changed = ["check", str(changing), "--lock", str(own)]
        cases[f"{tree}: unchanged (console script)"] = ([py, "-c", CONSOLE, *check], env_for(tree), None)
        cases[f"{tree}: unchanged (python -m envguard)"] = (
            [py, "-m", "envguard", *check],
            env_for(tree),
            None,
        )
        cold = env_for(tree, ENVGUARD_CACHE_DIR=str(work / f"cache-{tree}-cold"))  # its own, emptied each run
        cases[f"{tree}: cold"] = ([py, "-c", CONSOLE, *check], cold, wipe(tree))
        cases[f"{tree}: lock touched"] = ([py, "-c", CONSOLE, *check], env_for(tree), touch(own))
        cases[f"{tree}: history changed"] = ([py, "-c", CONSOLE, *changed], env_for(tree), append_history)
        cases[f"{tree}: history changed, record cache off"] = (
            [py, "-c", CONSOLE, *changed],
            env_for(tree, ENVGUARD_RECORD_CACHE="0"),
            append_history,
        )
    for argv, env, _prepare in cases.values():  # warm every cache once
        timed(argv, env)
        timed(argv, env)
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    wall: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, (argv, env, prepare) in cases.items():
            if prepare is not None:
                prepare()
            spent, took = timed(argv, env)
            cpu[name].append(spent)
            wall[name].append(took)
    floor = statistics.median(cpu["python -c pass"])
    print(f"| case ({args.runs} runs, interleaved) | CPU median ms | wall median ms | CPU / python -c pass |")
    print("|---|---:|---:|---:|")
    for name in cases:
        c, w = statistics.median(cpu[name]) * 1000, statistics.median(wall[name]) * 1000
        print(f"| {name} | {c:.0f} | {w:.0f} | {c / 1000 / floor:.2f}x |")
    for case in ("cold", "lock touched", "history changed", "history changed, record cache off"):
        mine, base = statistics.median(cpu[f"this: {case}"]), statistics.median(cpu[f"base: {case}"])
        print(f"{case}: this / base = {mine / base:.2f} (CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
