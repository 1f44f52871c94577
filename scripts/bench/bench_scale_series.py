"""Issue 28's scale series: check, diff, export and lock at 10,000 to 100,000 packages, before and after, with
the ratio per doubling of N (linear: 2.00x) and whether the 100,000-package target is met.

    python scripts/bench/bench_scale_series.py [--sizes 10000,20000,40000,100000] [--runs 3] [--work DIR]
                                               [--base COMMIT | --no-base]

Builds each prefix with synth_prefix.py (N conda records of ~1.5 KB: two files each, no payload, no
dist-infos; kept under --work and reused, as is its lock from `envguard lock PREFIX --no-probe`), and a copy
of envguard at --base (`git archive`) to run as "before". Each case runs as a fresh subprocess
(bench_scale.run_once: wall, the child's CPU time, its peak RSS from GNU time), the cases and both sides
interleaved round-robin, medians of --runs rounds. Every case starts from an empty envguard cache (nothing
remembered: the first run on a machine, the worst case) except "check (warm)": a full check (`--no-cache`: no
stored answer) with the record and parse caches filled, as after the environment or the lock changed a little.
Target (issue 28 item 9): at 100,000, <= 10 s of wall AND of CPU time and <= 1 GB peak RSS.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth_prefix
from bench_scale import REPO, Sample, archive, environments, load, run_once

BASE_COMMIT = "5bed6f7"  # main before issue 28's scale work
TARGET_S = 10.0
TARGET_RSS_KIB = 1_000_000_000 // 1024
Case = tuple[list[str], dict[str, str], Callable[[], None] | None]


def built(work: Path, size: int, env: dict[str, str]) -> tuple[Path, Path]:
    """The prefix of SIZE records and its lock (made once, reused from --work)."""
    prefix = synth_prefix.build(work / f"s{size}", size, 0, payload=False, median=2)
    lock = work / f"s{size}.lock.yml"
    if not lock.exists():
        envguard = str(Path(sys.executable).parent / "envguard")
        subprocess.run(
            [envguard, "lock", str(prefix), "--no-probe", "-o", str(lock)],
            env=env,
            check=True,
            capture_output=True,
        )
    return prefix, lock


def cases_for(size: int, prefix: Path, lock: Path, work: Path, base: Path | None) -> dict[str, Case]:
    envguard = str(Path(sys.executable).parent / "envguard")
    after, before = environments(work, base or work)
    sides = [("after", after)] + ([("before", before)] if base is not None else [])
    commands = {
        "check (uncached)": ["check", str(prefix), "--lock", str(lock), "--no-cache"],
        "check (warm)": ["check", str(prefix), "--lock", str(lock), "--no-cache"],
        "diff PREFIX LOCK": ["diff", str(prefix), str(lock)],
        "diff LOCK LOCK": ["diff", str(lock), str(lock)],
        "export LOCK --format explicit": ["export", str(lock), "--format", "explicit"],
        "lock PREFIX": ["lock", str(prefix), "--no-probe", "-o", str(work / "out.lock.yml")],
    }
    cases: dict[str, Case] = {}
    for number, (name, argv) in enumerate(commands.items()):
        for side, env in sides:
            cache = work / f"cache-{side}-{size}-{number}"
            own = {**env, "ENVGUARD_CACHE_DIR": str(cache)}
            if name == "check (warm)":
                shutil.rmtree(cache, ignore_errors=True)
                subprocess.run([envguard, *argv], env=own, capture_output=True, check=False)  # fills it
                cold = None
            else:
                cold = _emptied(cache)
            cases[f"{name} [{side}]"] = ([envguard, *argv], own, cold)
    return cases


def _emptied(cache: Path) -> Callable[[], None]:
    return lambda: shutil.rmtree(cache, ignore_errors=True)


def measure(cases: dict[str, Case], runs: int, cwd: Path) -> dict[str, list[Sample]]:
    """Round-robin samples; each case's hook (emptying its cache) runs just before its run."""
    samples: dict[str, list[Sample]] = {name: [] for name in cases}
    for _round in range(runs):
        for name, (argv, env, before) in cases.items():
            if before:
                before()
            samples[name].append(run_once(argv, env, cwd))
    return samples


def med(samples: list[Sample], field: int) -> float:
    return statistics.median(s[field] for s in samples)


def per_doubling(small: float, large: float, ratio: float) -> float:
    """The growth per doubling of N between two sizes `ratio` apart (2.00x: linear)."""
    return (large / small) ** (1 / math.log2(ratio)) if small > 0 else float("nan")


def _figures(samples: list[Sample]) -> str:
    return f"{med(samples, 0):.2f} s / {med(samples, 1):.2f} s / {max(v[2] for v in samples) / 1024:.0f} MiB"


def report(sizes: list[int], results: dict[int, dict[str, list[Sample]]], base: bool) -> list[str]:
    names = list(dict.fromkeys(name.rsplit(" [", 1)[0] for name in results[sizes[0]]))
    rows = [
        "| command | N | "
        + ("before: wall / CPU / peak RSS | " if base else "")
        + "after: wall / CPU / peak RSS | after per doubling (wall, CPU) | target met |",
        "|---|---:|" + ("---:|" if base else "") + "---:|---:|---|",
    ]
    for name in names:
        previous: tuple[int, float, float] | None = None
        for size in sizes:
            s = results[size]
            after = s[f"{name} [after]"]
            wall, cpu, rss = med(after, 0), med(after, 1), max(v[2] for v in after)
            cells = [f"`{name}`", f"{size:,}"]
            if base:
                old = s[f"{name} [before]"]
                cells.append(_figures(old))
            cells.append(_figures(after))
            growth = ""
            if previous is not None:
                ratio = size / previous[0]
                wall_growth, cpu_growth = (
                    per_doubling(previous[1], wall, ratio),
                    per_doubling(previous[2], cpu, ratio),
                )
                growth = f"{wall_growth:.2f}x, {cpu_growth:.2f}x"
            cells.append(growth)
            met = ""
            if size >= 100_000:
                ok = wall <= TARGET_S and cpu <= TARGET_S and rss <= TARGET_RSS_KIB
                met = "met" if ok else "MISSED"
            cells.append(met)
            rows.append("| " + " | ".join(cells) + " |")
            previous = (size, wall, cpu)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,20000,40000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--base", default=BASE_COMMIT, help="the 'before' envguard (a commit)")
    parser.add_argument("--no-base", action="store_true", help="time this working tree alone")
    parser.add_argument("--work", type=Path, help="keep the prefixes here (default: a temp folder, removed)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-series-"))
    work.mkdir(parents=True, exist_ok=True)
    base = None if args.no_base else archive(args.base, work / f"base-{args.base}")
    sizes = [int(s) for s in args.sizes.split(",")]
    out = [f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; before = {args.base}; repo {REPO.name}"]
    results: dict[int, dict[str, list[Sample]]] = {}
    try:
        for size in sizes:
            after_env = environments(work, base or work)[0]
            build_env = {**after_env, "ENVGUARD_CACHE_DIR": str(work / "cache-build")}
            prefix, lock = built(work, size, build_env)
            start = load()
            results[size] = measure(cases_for(size, prefix, lock, work, base), args.runs, work)
            out.append(
                f"N={size:,}: {args.runs} interleaved rounds; {start} at the start, {load()} at the end"
            )
            print(out[-1], flush=True)
        out += ["", *report(sizes, results, base is not None)]
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
