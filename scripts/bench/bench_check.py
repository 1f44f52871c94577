"""Benchmark `envguard check` on a real 300-package prefix, side by side with its floors, in one run.

    python scripts/bench/bench_check.py [--runs 15] [--packages 300] [--work DIR]

Builds the prefix exactly as bench_snapshot.py does (real packages from scripts/fixture_channel.py --bulk,
installed by rattler), locks it with `envguard lock --no-probe`, then times, interleaved round-robin, each as
a fresh subprocess of the installed console script:
  - `envguard check` with the environment unchanged (the stat-cache fast path),
  - `envguard check` after a change (conda-meta/history touched before every run: full comparison; the parsed
    lock is already cached as JSON),
  - the same with every cache removed before each run (the lock YAML is parsed too),
  - `python -c pass`, `ls conda-meta`, and the floor: a plain script json-loading every conda-meta/*.json;
  - with --baseline, the unchanged and changed checks and `envguard --help` of this tree and of the baseline.
Prints a Markdown table of medians and ratios, and whether the targets are met: fast path <= 3x (aim 2x)
`python -c pass` + a directory listing; full check <= 2x the json-load floor.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fixture_channel
from bench_snapshot import FLOOR, bench_env, build_prefix, launcher_argv, timed

Case = tuple[list[str], Callable[[], None] | None]


def build_heavy_prefix(work: Path, packages: int, files: int) -> Path:
    """Like bench_snapshot.build_prefix, but each bulk package installs `files` files, so conda-meta records
    weigh what real ones do (a real 300-package environment: ~76 ms json-load floor vs ~18 ms start-up)."""
    import asyncio

    import rattler

    prefix = work / "env"
    if (prefix / "conda-meta").is_dir():
        return prefix
    channels = fixture_channel.build_channels(work / "channels")
    recipes = fixture_channel.bulk_recipes(packages)
    for index, recipe in enumerate(recipes):
        recipe.files = {
            f"share/bench/pkg{index:03d}/file{j}.txt": f"bench {index} {j}\n" * 20 for j in range(files)
        }
        fixture_channel.build_package(recipe, channels["forge"])
    fixture_channel.index(channels["forge"])
    specs = ["python=3.11", "numpy=1.26", "pip"] + [r.name for r in recipes]
    glibc = rattler.GenericVirtualPackage(
        rattler.PackageName("__glibc"), rattler.Version("2.36"), rattler.BuildString("0")
    )

    async def go() -> None:
        records = await rattler.solve(
            [rattler.Channel(channels["forge"].resolve().as_uri())],
            [rattler.MatchSpec(s) for s in specs],
            platforms=["linux-64", "noarch"],
            virtual_packages=[glibc],
        )
        await rattler.install(records, prefix, cache_dir=work / "pkgs", show_progress=False)

    asyncio.run(go())
    fixture_channel.write_history(prefix, specs[:3], cmd="conda create python=3.11 numpy=1.26 pip")
    return prefix


def cases(prefix: Path, lock: Path, work: Path, cache: Path, baseline: Path | None = None) -> dict[str, Case]:
    bindir = Path(sys.executable).parent
    envguard = shutil.which("envguard", path=str(bindir)) or str(bindir / "envguard")
    floor = work / "floor.py"
    floor.write_text(FLOOR)
    check = [envguard, "check", str(prefix), "--lock", str(lock)]
    history = prefix / "conda-meta" / "history"

    def touch() -> None:  # a change the fingerprint sees, that leaves the packages alone
        with open(history, "a", encoding="utf-8") as handle:
            handle.write("# bench\n")

    def warm(argv: list[str]) -> Callable[[], None]:
        """Run the command once, untimed: "unchanged" means unchanged since this version's own last check
        (the other cases in the round touch the environment)."""
        return lambda: subprocess.run(argv, check=True, capture_output=True, env=bench_env(cache))

    def cold() -> None:
        touch()
        shutil.rmtree(cache / "check", ignore_errors=True)

    found: dict[str, Case] = {
        "envguard check (unchanged: fast path)": (check, warm(check)),
        "envguard check (after a change: full)": (check, touch),
        "envguard check (after a change, no caches: full + YAML)": (check, cold),
        "python -c pass": ([sys.executable, "-c", "pass"], None),
        "ls conda-meta": (["ls", str(prefix / "conda-meta")], None),
        "floor: json-load every conda-meta/*.json": (
            [sys.executable, str(floor), str(prefix / "conda-meta")],
            None,
        ),
    }
    if baseline is not None:  # the same checks from this tree and from an older checkout, through one shim
        here = Path(__file__).resolve().parents[2]
        for label, tree, own in (
            ("this tree", here, None),
            (f"baseline {baseline.name}", baseline, work / "base-cache"),
        ):
            argv = [*launcher_argv(tree, own), *check[1:]]
            found[f"check unchanged [{label}, shim]"] = (argv, warm(argv))
            found[f"check after a change [{label}, shim]"] = (argv, touch)
            found[f"envguard --help [{label}, shim]"] = ([*launcher_argv(tree, own), "--help"], None)
    return found


def measure(
    runs: dict[str, Case], count: int, env: dict[str, str], clock: str = "wall"
) -> dict[str, list[float]]:
    """Round-robin timings in seconds, one untimed warm-up each (the fast path's cache is filled by it)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for argv, before in runs.values():
        if before:
            before()
        subprocess.run(argv, check=True, capture_output=True, env=env)
    for _ in range(count):
        for name, (argv, before) in runs.items():
            if before:
                before()
            times[name].append(timed(argv, env, clock))
    return times


def report(times: dict[str, list[float]], packages: int, record_kb: float) -> str:
    med = {name: statistics.median(values) for name, values in times.items()}
    startup = med["python -c pass"] + med["ls conda-meta"]
    floor = med["floor: json-load every conda-meta/*.json"]
    rows = [
        f"Prefix: {packages} conda packages (conda-meta records {record_kb:.1f} KB on average); "
        f"{len(next(iter(times.values())))} runs each, interleaved; "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs.",
        "",
        "| command | median (ms) | min (ms) | / (python -c pass + ls) | / json-load floor |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, values in times.items():
        rows.append(
            f"| `{name}` | {med[name] * 1000:.1f} | {min(values) * 1000:.1f} | "
            f"{med[name] / startup:.2f}x | {med[name] / floor:.2f}x |"
        )
    fast = med["envguard check (unchanged: fast path)"] / startup
    full = med["envguard check (after a change: full)"] / floor
    cold = med["envguard check (after a change, no caches: full + YAML)"] / floor
    rows += [
        "",
        f"- fast path / (python -c pass + ls) = {fast:.2f}x (target <= 3x, aim 2x): {_met(fast <= 3)}",
        f"- full check / json-load floor = {full:.2f}x (target <= 2x): {_met(full <= 2)}",
        f"- full check without caches / json-load floor = {cold:.2f}x (for reference)",
    ]
    return "\n".join(rows)


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--packages", type=int, default=300, help="extra packages besides python/numpy/pip")
    parser.add_argument("--work", type=Path, help="reuse this folder (default: a temp folder, removed after)")
    parser.add_argument(
        "--baseline", type=Path, help="also time an older checkout of envguard (a git worktree)"
    )
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="cpu: the child's CPU time")
    parser.add_argument(
        "--files-per-package",
        type=int,
        default=8,
        help="files each bulk package installs (8: bench_snapshot's prefix; ~60: real weights)",
    )
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-check-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        files = args.files_per_package
        prefix = (
            build_prefix(work, args.packages)
            if files == 8
            else build_heavy_prefix(work, args.packages, files)
        )
        cache = work / "cache"
        env = bench_env(cache)
        lock = work / "conda-lock.yml"
        subprocess.run(
            [Path(sys.executable).parent / "envguard", "lock", str(prefix), "--no-probe", "-o", str(lock)],
            check=True,
            capture_output=True,
            env=env,
        )
        records = [p for p in (prefix / "conda-meta").iterdir() if p.suffix == ".json"]
        kilobytes = sum(p.stat().st_size for p in records) / len(records) / 1024
        runs = cases(prefix, lock, work, cache, args.baseline)
        print(f"clock: {args.clock}")
        print(report(measure(runs, args.runs, env, args.clock), len(records), kilobytes))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
