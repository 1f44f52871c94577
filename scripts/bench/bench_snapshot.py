"""Benchmark `envguard snapshot --no-probe` on a real 300-package prefix, side by side with the alternatives.

    python scripts/bench/bench_snapshot.py [--runs 15] [--packages 300] [--work DIR]

Builds real packages (scripts/fixture_channel.py --bulk), installs them with rattler into a prefix, then
times, interleaved round-robin, each as a fresh subprocess:
  - `envguard snapshot PREFIX --no-probe` (the installed console script),
  - the floor: a plain Python script that only json-loads every conda-meta/*.json,
  - `pip list --format json --path SITE_PACKAGES`,
  - `envguard --help` and `python -c pass` (start-up).
Prints a Markdown table of medians and ratios to the floor, and whether the targets are met (snapshot <= 2x
floor, aim 1.5x; `--help` < 80 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import fixture_channel  # noqa: E402

FLOOR = (
    "import json, os, sys\n"
    "meta = sys.argv[1]\n"
    "for name in os.listdir(meta):\n"
    "    if name.endswith('.json'):\n"
    "        with open(os.path.join(meta, name), 'rb') as handle:\n"
    "            json.load(handle)\n"
)


def build_prefix(work: Path, packages: int) -> Path:
    """Channels with `packages` extra packages, and a prefix with python, numpy, pip and all of them."""
    import rattler

    prefix = work / "env"
    if (prefix / "conda-meta").is_dir():
        return prefix
    channels = fixture_channel.build_channels(work / "channels", bulk=packages)
    specs = ["python=3.11", "numpy=1.26", "pip"] + [r.name for r in fixture_channel.bulk_recipes(packages)]

    async def go() -> None:
        records = await rattler.solve(
            [rattler.Channel(channels["forge"].resolve().as_uri())],
            [rattler.MatchSpec(s) for s in specs],
            platforms=["linux-64", "noarch"],
            virtual_packages=[
                rattler.GenericVirtualPackage(
                    rattler.PackageName("__glibc"), rattler.Version("2.36"), rattler.BuildString("0")
                )
            ],
        )
        await rattler.install(records, prefix, cache_dir=work / "pkgs", show_progress=False)

    asyncio.run(go())
    fixture_channel.write_history(prefix, specs[:3], cmd="conda create python=3.11 numpy=1.26 pip")
    return prefix


def commands(prefix: Path, work: Path) -> dict[str, list[str]]:
    bindir = Path(sys.executable).parent
    envguard = shutil.which("envguard", path=str(bindir)) or str(bindir / "envguard")
    site = next((prefix / "lib").glob("python3*/site-packages"))
    floor = work / "floor.py"
    floor.write_text(FLOOR)
    return {
        "envguard snapshot --no-probe": [envguard, "snapshot", str(prefix), "--no-probe"],
        "floor: json-load every conda-meta/*.json": [sys.executable, str(floor), str(prefix / "conda-meta")],
        "pip list --format json": [
            *(sys.executable, "-m", "pip", "list", "--format", "json"),
            *("--path", str(site), "--disable-pip-version-check"),
        ],
        "envguard --help": [envguard, "--help"],
        "python -c pass": [sys.executable, "-c", "pass"],
    }


def launcher_argv(tree: Path, cache: Path | None = None) -> list[str]:
    """`envguard` run from the checkout `tree` (this one, or an older commit given as --baseline): its console
    script's entry point imported through sys.path, so two versions can be timed side by side in one run. With
    `cache`, that version keeps its own envguard cache (two versions' stat caches would evict each other)."""
    module = (
        "envguard.cli.launcher"
        if (tree / "envguard" / "cli" / "launcher.py").is_file()
        else "envguard.launcher"
    )
    own = f"import os; os.environ['ENVGUARD_CACHE_DIR'] = {str(cache)!r}; " if cache else ""
    code = (
        f"import sys; {own}sys.path.insert(0, {str(tree)!r}); sys.argv[0] = 'envguard'; "
        f"from {module} import main; main()"
    )
    return [sys.executable, "-c", code]


def with_baseline(cmds: dict[str, list[str]], baseline: Path | None, envguard: str) -> dict[str, list[str]]:
    """Each envguard command also as `... (this tree)` and `... (baseline)` through the same launcher shim."""
    if baseline is None:
        return cmds
    here = Path(__file__).resolve().parents[2]
    extra: dict[str, list[str]] = {}
    for name, argv in cmds.items():
        if argv[0] == envguard:
            extra[f"{name} [this tree, shim]"] = [*launcher_argv(here), *argv[1:]]
            own = baseline / ".bench-cache"
            extra[f"{name} [baseline {baseline.name}, shim]"] = [*launcher_argv(baseline, own), *argv[1:]]
    return {**cmds, **extra}


def bench_env(cache: Path) -> dict[str, str]:
    """The environment every timed subprocess gets: its own envguard cache, no active conda env, and compiled
    bytecode (PYTHONDONTWRITEBYTECODE would make every import recompile: measure as installed)."""
    env = {**os.environ, "ENVGUARD_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("CONDA_PREFIX", None)
    return env


def timed(argv: list[str], env: dict[str, str], clock: str = "wall") -> float:
    """Seconds one run takes: wall time, or (`clock="cpu"`) the child's user+system CPU time, which a loaded
    machine disturbs far less."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu if clock == "cpu" else wall


def measure(
    cmds: dict[str, list[str]], runs: int, env: dict[str, str], clock: str = "wall"
) -> dict[str, list[float]]:
    """Round-robin timings in seconds (one warm-up each first, so caches are equally warm for all)."""
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for argv in cmds.values():
        subprocess.run(argv, check=True, capture_output=True, env=env)
    for _ in range(runs):
        for name, argv in cmds.items():
            times[name].append(timed(argv, env, clock))
    return times


def table(times: dict[str, list[float]], floor: str, cmds: dict[str, list[str]], count: int) -> str:
    base = statistics.median(times[floor])
    rows = [
        f"Prefix: {count} conda packages; {len(next(iter(times.values())))} runs each, interleaved; "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs.",
        "",
        "| command | median (ms) | min (ms) | ratio to floor |",
        "|---|---:|---:|---:|",
    ]
    for name, values in times.items():
        med = statistics.median(values)
        rows.append(f"| `{name}` | {med * 1000:.1f} | {min(values) * 1000:.1f} | {med / base:.2f}x |")
    return "\n".join(rows)


def verdict(times: dict[str, list[float]], floor: str) -> list[str]:
    base = statistics.median(times[floor])
    snap = statistics.median(times["envguard snapshot --no-probe"]) / base
    helpt = statistics.median(times["envguard --help"]) * 1000
    return [
        f"- snapshot / floor = {snap:.2f}x (target <= 2x, aim 1.5x): {'met' if snap <= 2 else 'MISSED'}",
        f"- `envguard --help` = {helpt:.1f} ms (target < 80 ms): {'met' if helpt < 80 else 'MISSED'}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--packages", type=int, default=300, help="extra packages besides python/numpy/pip")
    parser.add_argument("--work", type=Path, help="reuse this folder (default: a temp folder, removed after)")
    parser.add_argument(
        "--baseline", type=Path, help="also time an older checkout of envguard (a git worktree)"
    )
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="cpu: the child's CPU time")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        prefix = build_prefix(work, args.packages)
        count = sum(1 for n in os.listdir(prefix / "conda-meta") if n.endswith(".json"))
        env = bench_env(work / "cache")
        cmds = commands(prefix, work)
        cmds = with_baseline(cmds, args.baseline, cmds["envguard --help"][0])
        times = measure(cmds, args.runs, env, args.clock)
        print(f"clock: {args.clock}")
        floor = "floor: json-load every conda-meta/*.json"
        print(table(times, floor, cmds, count))
        print()
        print("\n".join(verdict(times, floor)))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
