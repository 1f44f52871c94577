"""The scaling table: every reading command at N = 300 and 3,000 packages, before and after, with floors.

    python scripts/bench/bench_scale.py [--sizes 300,3000] [--runs 7] [--files-runs 3] [--base COMMIT]
                                        [--work DIR]

Builds the prefixes with synth_prefix.py (records shaped like conda's, one 5.6 MB pytorch record; M = 50
dist-infos at N=300, 500 at N=3000; real files behind every record), a second and third prefix for diff (10
versions bumped; identical), a fourth (a copy) whose history is appended to before each run of the "just
changed" cases, and a copy of envguard at --base (`git archive`, default: the commit this branch started from)
to run as "before". Then times, interleaved round-robin, each as a fresh subprocess with warm caches: the
floors (`python -c pass`, `ls conda-meta`, json-load of every record, and the stat fingerprint walk alone: the
safety of the unchanged check), snapshot, check (unchanged, and full just after a change), lock, export
(unchanged and just changed), diff (10 changed, identical), before and after; and with --files-runs,
`check --files` against single-threaded `sha256sum` and a one-thread Python hashlib loop over the same files.
Run it with the interpreter of a plain `pip install .` venv to measure that install instead of this one.
Reports medians of wall AND of the child's CPU time (getrusage: less disturbed by other jobs on a shared
machine), the child's peak RSS for `check --files`, ratios, the machine's load before and after, and whether
each target of issue 12 is met.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
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
from bench_snapshot import FLOOR

REPO = Path(__file__).resolve().parents[2]
BASE_COMMIT = "8cbefe6"
HASH_LOOP = (
    "import hashlib, sys\n"
    "for path in open(sys.argv[1]).read().split('\\0'):\n"
    "    if path:\n"
    "        with open(path, 'rb') as h:\n"
    "            hashlib.sha256(h.read()).hexdigest()\n"
)
WALK = (
    "import sys\nfrom envguard.cache.statsig import stat_fingerprint\n"
    "for prefix in sys.argv[1:]:\n    stat_fingerprint(prefix)\n"
)
Sample = tuple[float, float, int]  # wall s, child CPU s, child peak RSS KiB
Case = tuple[list[str], dict[str, str], Callable[[], None] | None]


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> Sample:
    """Wall and CPU time (getrusage of the child and what it waited for), and peak RSS as GNU time reports it
    (a child forked from this process would inherit this process's RSS as its high-water mark)."""
    rss = cwd / ".maxrss"
    timed = ["/usr/bin/time", "-f", "%M", "-o", str(rss), *argv] if os.path.exists("/usr/bin/time") else argv
    start = time.perf_counter()
    child = subprocess.Popen(timed, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}")
    peak = int(rss.read_text().split()[-1]) if timed is not argv else usage.ru_maxrss
    return wall, usage.ru_utime + usage.ru_stime, peak


def measure(cases: dict[str, Case], runs: int, cwd: Path) -> dict[str, list[Sample]]:
    """Round-robin samples, one untimed warm-up each (caches filled alike)."""
    samples: dict[str, list[Sample]] = {name: [] for name in cases}
    for round_number in range(runs + 1):
        for name, (argv, env, before) in cases.items():
            if before:
                before()
            sample = run_once(argv, env, cwd)
            if round_number:
                samples[name].append(sample)
    return samples


AFTER: list[Path] = []  # a frozen copy of the "after" code (--after), else the working tree


def archive(commit: str, where: Path) -> Path:
    """envguard/ as of COMMIT, unpacked at WHERE (imported with PYTHONPATH; the timed runs use cwd=work)."""
    if not where.is_dir():
        where.mkdir(parents=True)
        data = subprocess.run(["git", "-C", str(REPO), "archive", commit, "envguard"], capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(where)], input=data.stdout, check=True)
    return where


def environments(work: Path, base: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(after, before): the same variables, each with its own envguard cache; before imports --base."""
    common = {**os.environ}
    for var in (
        "PYTHONDONTWRITEBYTECODE",
        "CONDA_PREFIX",
        "VIRTUAL_ENV",
        "ENVGUARD_RECORD_CACHE",
        "PYTHONPATH",
    ):
        common.pop(var, None)
    after = {**common, "ENVGUARD_CACHE_DIR": str(work / "cache-after")}
    if AFTER:
        after["PYTHONPATH"] = str(AFTER[0])
    before = {**common, "ENVGUARD_CACHE_DIR": str(work / "cache-before"), "PYTHONPATH": str(base)}
    return after, before


def cases_for(
    prefix: Path, work: Path, base: Path, other: Path, same: Path, touched: Path
) -> dict[str, Case]:
    envguard = str(Path(sys.executable).parent / "envguard")
    after, before = environments(work, base)
    floor = work / "floor.py"
    floor.write_text(FLOOR)
    lock = work / f"lock-{prefix.name}.yml"
    subprocess.run([envguard, "lock", str(prefix), "--no-probe", "-o", str(lock)], env=after, check=True)
    # Only TOUCHED (a copy of PREFIX) is changed before a run, so the other cases read a prefix that stays as
    # it is (the steady state the caches serve) and these show the first read after a change.
    history = touched / "conda-meta" / "history"

    def touch(_env: dict[str, str]) -> None:  # a change the fingerprint sees, packages unchanged
        with open(history, "a", encoding="utf-8") as handle:
            handle.write("# bench\n")

    check = ["check", str(prefix), "--lock", str(lock)]

    def refresh(env: dict[str, str]) -> None:  # this side's last full check saw the prefix as it is now
        subprocess.run([envguard, *check], env=env, capture_output=True, check=False)

    commands: dict[str, tuple[list[str], Callable[[dict[str, str]], None] | None]] = {
        "snapshot --no-probe": (["snapshot", str(prefix), "--no-probe"], None),
        "check (unchanged)": (check, refresh),
        "check (full, just changed)": (["check", str(touched), "--lock", str(lock)], touch),
        "export (just changed)": (["export", str(touched)], touch),
        "lock --no-probe": (["lock", str(prefix), "--no-probe", "-o", str(work / "out.yml")], None),
        "export": (["export", str(prefix)], None),
        "diff (10 changed)": (["diff", str(prefix), str(other)], None),
        "diff (identical)": (["diff", str(prefix), str(same)], None),
    }
    cases: dict[str, Case] = {
        "python -c pass": ([sys.executable, "-c", "pass"], after, None),
        "ls conda-meta": (["ls", str(prefix / "conda-meta")], after, None),
        "floor: json-load every record": (
            [sys.executable, str(floor), str(prefix / "conda-meta")],
            after,
            None,
        ),
        # what the unchanged check cannot skip: the stat walk its safety rests on, in a fresh interpreter
        "the stat fingerprint walk alone": ([sys.executable, "-c", WALK, str(prefix)], after, None),
        # ... and what an identical diff cannot skip: the walks of both sides (its cache's safety)
        "both sides' stat walks alone (diff)": (
            [sys.executable, "-c", WALK, str(prefix), str(same)],
            after,
            None,
        ),
    }
    for name, (argv, hook) in commands.items():
        for side, env in (("before", before), ("after", after)):
            action = None if hook is None else functools.partial(hook, env)
            cases[f"{name} [{side}]"] = ([envguard, *argv], env, action)
    return cases


def files_cases(prefix: Path, work: Path, base: Path) -> dict[str, Case]:
    envguard = str(Path(sys.executable).parent / "envguard")
    after, before = environments(work, base)
    listing = work / f"files-{prefix.name}.txt"
    listing.write_text("\0".join(synth_prefix.files_of(prefix)))
    loop = work / "hashloop.py"
    loop.write_text(HASH_LOOP)
    lock = work / f"lock-{prefix.name}.yml"
    argv = [envguard, "check", str(prefix), "--lock", str(lock), "--files"]
    return {
        "sha256sum (one thread)": (["xargs", "-0", "-a", str(listing), "sha256sum"], after, None),
        "python hashlib loop (one thread)": ([sys.executable, str(loop), str(listing)], after, None),
        "check --files [before]": (argv, before, None),
        "check --files [after]": (argv, after, None),
    }


def med(samples: list[Sample], field: int) -> float:
    return statistics.median(s[field] for s in samples)


def table(title: str, samples: dict[str, list[Sample]], floor: str) -> list[str]:
    rows = [
        title,
        "",
        "| command | wall median (ms) | wall min (ms) | CPU median (ms) | peak RSS (MiB) | wall / floor "
        "| after / before (wall, CPU) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    base = med(samples[floor], 0)
    for name, values in samples.items():
        ratio = ""
        if name.endswith("[after]"):
            old = samples[name.replace("[after]", "[before]")]
            ratio = f"{med(values, 0) / med(old, 0):.2f}x, {med(values, 1) / med(old, 1):.2f}x"
        rows.append(
            f"| `{name}` | {med(values, 0) * 1000:.1f} | {min(v[0] for v in values) * 1000:.1f} | "
            f"{med(values, 1) * 1000:.1f} | {max(v[2] for v in values) / 1024:.0f} | "
            f"{med(values, 0) / base:.2f}x | {ratio} |"
        )
    return rows


def verdicts(size: int, s: dict[str, list[Sample]]) -> list[str]:
    """Each target of issue 12 that this table can judge, on wall time and on the children's CPU time."""
    lines = []
    for field, label in ((0, "wall"), (1, "CPU")):
        floor = med(s["floor: json-load every record"], field)
        start = med(s["python -c pass"], field) + med(s["ls conda-meta"], field)

        def after(name: str, field: int = field) -> float:
            return med(s[f"{name} [after]"], field)

        snap = 0.8 if size >= 3000 else 1.2
        checks = [
            (f"snapshot / json-load floor <= {snap}x", after("snapshot --no-probe") / floor, snap),
            ("unchanged check / (python -c pass + ls) <= 2x", after("check (unchanged)") / start, 2.0),
        ]
        if size >= 3000:
            checks += [
                ("full check / json-load floor <= 1.0x", after("check (full, just changed)") / floor, 1.0),
                ("diff of two 3,000-package envs <= 0.3 s", after("diff (10 changed)"), 0.3),
                ("diff of identical 3,000-package envs <= 0.15 s", after("diff (identical)"), 0.15),
            ]
        lines += [
            f"- N={size}, {label}: {text}: {value:.2f} — {'met' if value <= limit else 'MISSED'}"
            for text, value, limit in checks
        ]
    return lines


def load() -> str:
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,3000")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--files-runs", type=int, default=0, help="rounds of the check --files section")
    parser.add_argument("--files-sizes", default="300", help="sizes for the check --files section")
    parser.add_argument("--base", default=BASE_COMMIT, help="the 'before' envguard (a commit)")
    parser.add_argument("--after", help="the 'after' envguard (a commit; default: the working tree)")
    parser.add_argument("--work", type=Path, help="reuse this folder (default: a temp folder, removed after)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    base = work / f"base-{args.base}"
    if not base.is_dir():
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", args.base, "envguard"], capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
    out: list[str] = [f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; before = {args.base}"]
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            dists = 50 if size < 3000 else 500
            prefix = synth_prefix.build(work / f"n{size}", size, dists)
            other = synth_prefix.variant(prefix, work / f"n{size}-b", bump=10)
            same = synth_prefix.variant(prefix, work / f"n{size}-same")
            touched = synth_prefix.variant(prefix, work / f"n{size}-touched")
            time.sleep(2.5)  # records younger than 2 s are not cached yet (envguard.cache.records.FRESH_NS)
            cases = cases_for(prefix, work, base, other, same, touched)
            start = load()
            samples = measure(cases, args.runs, work)
            (work / f"samples-n{size}.json").write_text(json.dumps(samples))
            title = (
                f"N={size} packages, M={dists} dist-infos, {args.runs} interleaved runs; {start} at the "
                f"start, {load()} at the end"
            )
            out += ["", *table(title, samples, "floor: json-load every record"), "", *verdicts(size, samples)]
            print("\n".join(out), flush=True)
        if args.files_runs:
            for size in (int(s) for s in args.files_sizes.split(",")):
                prefix = work / f"n{size}"
                count = len(synth_prefix.files_of(prefix))
                start = load()
                samples = measure(files_cases(prefix, work, base), args.files_runs, work)
                (work / f"samples-files-n{size}.json").write_text(json.dumps(samples))
                title = (
                    f"check --files, N={size} ({count} files), {args.files_runs} interleaved runs; {start} "
                    f"at the start, {load()} at the end"
                )
                out += ["", *table(title, samples, "sha256sum (one thread)")]
                print("\n".join(out[-len(samples) - 4 :]), flush=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
