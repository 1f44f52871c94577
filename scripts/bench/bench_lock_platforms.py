"""`envguard lock -f environment.yml` for 4 platforms, before and after, beside raw rattler with one Gateway.

    python scripts/bench/bench_lock_platforms.py [--runs 11] [--base COMMIT] [--work DIR]

A local file:// channel (scripts/fixture_channel.py), an environment.yml declaring linux-64, linux-aarch64,
osx-64 and osx-arm64, and, interleaved as fresh processes: envguard before (--base) and after (the working
tree), and the floor: one Python process solving the same specs for the 4 platforms with py-rattler and one
shared Gateway (no envguard). Target (issue 12): lock -f for 4 platforms <= 1.2x raw rattler with a shared
Gateway. A second floor is the same process also reading the environment.yml with PyYAML (what any Python
tool that takes one pays; rattler does not read environment.yml). Two more rows only import and exit: the
floor's modules, and those plus every module lock -f loads (taken from a probe run of the lock). Prints
medians of wall and child CPU time, ratios to the first floor (of medians, and the median of each run's
ratio), the load, then the lock's margin over the floor beside what 1.2x leaves, the imports' share of it,
and the dataclasses CPython builds while the lock runs (envguard's and rattler's, with their time).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fixture_channel
from bench_scale import BASE_COMMIT, Sample, archive, environments, load, measure

PLATFORMS = ("linux-64", "linux-aarch64", "osx-64", "osx-arm64")
# The floor ends with os._exit as envguard does (cli/boundary.exit_process): rattler's runtime can crash
# CPython's finalisation (exit 139), and finalising costs time envguard never pays.
RAW = (
    "import asyncio, os, sys, rattler\n"
    "channel, platforms = sys.argv[1], sys.argv[2].split(',')\n"
    "gateway = rattler.Gateway()\n"
    "async def one(p):\n"
    "    return await rattler.solve([rattler.Channel(channel)], [rattler.MatchSpec('cuda-version=12.1')],\n"
    "        gateway=gateway, platforms=[rattler.Subdir(p), rattler.Subdir('noarch')], virtual_packages=[])\n"
    "for p in platforms:\n"
    "    asyncio.run(one(p))\n"
    "os._exit(0)\n"
)


# Run in a child with the lock's own arguments: lock -f through the console script's entry (no click), then
# every module it loaded, and the time CPython spent building dataclasses while it ran (the model and the
# commands' option and result types are frozen dataclasses; each one's methods are generated and compiled
# when its module is imported).
PROBE = (
    "import dataclasses, os, sys, time\n"
    "made = []\n"
    "plain = dataclasses.dataclass\n"
    "def timed(cls=None, /, **kw):\n"
    "    def wrap(c):\n"
    "        start = time.perf_counter()\n"
    "        try:\n"
    "            return plain(**kw)(c)\n"
    "        finally:\n"
    "            made.append((c.__module__, time.perf_counter() - start))\n"
    "    return wrap if cls is None else wrap(cls)\n"
    "dataclasses.dataclass = timed\n"
    "from envguard.cli.app import run\n"
    "code = run(sys.argv[1:])\n"
    "ours = [t for m, t in made if m.startswith('envguard')]\n"
    "print(len(ours), sum(ours), len(made) - len(ours), sum(t for _m, t in made) - sum(ours))\n"
    "print(' '.join(sorted(sys.modules)))\n"
    "sys.stdout.flush()\n"
    "os._exit(code)\n"
)
FLOOR_IMPORTS = "import asyncio, os, sys, rattler\nprint(' '.join(sorted(sys.modules)))\nos._exit(0)\n"


def lock_imports(work: Path, env: dict[str, str], lock: list[str]) -> tuple[str, list[float]]:
    """(a program importing every module lock -f loads that the floor's program does not, then exiting;
    [envguard's dataclasses, their ms, others', their ms] from one probe run)."""
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, *lock[1:]],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    )
    counts, modules = probe.stdout.splitlines()[:2]
    floor = subprocess.run(
        [sys.executable, "-c", FLOOR_IMPORTS], env=env, cwd=work, capture_output=True, text=True, check=True
    )
    extra = sorted(set(modules.split()) - set(floor.stdout.split()) - {"__main__"})
    program = (
        f"import importlib, os\nfor name in {extra!r}:\n    importlib.import_module(name)\nos._exit(0)\n"
    )
    count, ours, others, theirs = counts.split()
    return program, [float(count), float(ours) * 1000, float(others), float(theirs) * 1000]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--base", default=BASE_COMMIT)
    parser.add_argument("--work", type=Path)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-lockp-"))
    work.mkdir(parents=True, exist_ok=True)
    base = archive(args.base, work / f"base-{args.base}")
    channels = work / "channels"
    forge = (
        channels / "forge"
        if (channels / "forge").is_dir()
        else fixture_channel.build_channels(channels)["forge"]
    )
    uri = forge.resolve().as_uri()
    envyml = work / "environment.yml"
    envyml.write_text(
        f"channels:\n  - {uri}\nplatforms: [{', '.join(PLATFORMS)}]\ndependencies:\n  - cuda-version=12.1\n"
    )
    (work / "raw.py").write_text(RAW)
    # The same floor reading the environment.yml with PyYAML (C loader), as any Python tool taking one must
    # (rattler itself does not read environment.yml): how much of envguard's margin is PyYAML's import.
    (work / "raw_yaml.py").write_text(
        "import yaml, sys\n"
        "yaml.load(open(sys.argv[3]).read(), Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))\n" + RAW
    )
    after, before = environments(work, base)
    envguard = str(Path(sys.executable).parent / "envguard")
    lock = [envguard, "lock", "-f", str(envyml), "--no-cuda", "-o", str(work / "out.yml")]
    cases = {
        "raw rattler, 4 solves, one Gateway": (
            [sys.executable, str(work / "raw.py"), uri, ",".join(PLATFORMS)],
            after,
            None,
        ),
        "raw rattler + PyYAML reading environment.yml": (
            [sys.executable, str(work / "raw_yaml.py"), uri, ",".join(PLATFORMS), str(envyml)],
            after,
            None,
        ),
        "envguard lock -f [before]": (lock, before, None),
        "envguard lock -f [after]": (lock, after, None),
    }
    # Where the after side's margin goes: the floor's imports alone, and those plus every module lock -f
    # loads (envguard's and the standard library's it needs), each as a program that only imports and exits.
    program, made = lock_imports(work, after, lock)
    (work / "imports_floor.py").write_text("import asyncio, os, sys, rattler\nos._exit(0)\n")
    (work / "imports_lock.py").write_text("import asyncio, os, sys, rattler\n" + program)
    cases["imports alone: the floor's (asyncio, rattler)"] = (
        [sys.executable, str(work / "imports_floor.py")],
        after,
        None,
    )
    cases["imports alone: the floor's + every module lock -f loads [after]"] = (
        [sys.executable, str(work / "imports_lock.py")],
        after,
        None,
    )
    start = load()
    samples = measure(cases, args.runs, work)
    floor = samples["raw rattler, 4 solves, one Gateway"]
    base_wall = statistics.median(s[0] for s in floor)
    base_cpu = statistics.median(s[1] for s in floor)
    print(
        f"lock -f for {len(PLATFORMS)} platforms, {args.runs} interleaved runs; {start} -> {load()}; "
        f"{os.cpu_count()} CPUs"
    )
    print(
        "\n| command | wall median (ms) | wall min (ms) | CPU median (ms) | wall ratio | wall ratio, per run "
        "| CPU ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, values in samples.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        # each run's ratio to the floor's run just before it (drift in the machine's speed cancels out)
        paired = statistics.median(v[0] / f[0] for v, f in zip(values, floor, strict=True))
        print(
            f"| `{name}` | {wall * 1000:.1f} | {min(v[0] for v in values) * 1000:.1f} | {cpu * 1000:.1f} | "
            f"{wall / base_wall:.2f}x | {paired:.2f}x | {cpu / base_cpu:.2f}x |"
        )
    print(margin(samples, made))
    return 0


def margin(samples: dict[str, list[Sample]], made: list[float]) -> str:
    """The after side's margin over the floor, and how much of it is imports (medians of per-run
    differences), with the dataclass count and time from the probe."""
    floor = samples["raw rattler, 4 solves, one Gateway"]
    after = samples["envguard lock -f [after]"]
    bare = samples["imports alone: the floor's (asyncio, rattler)"]
    loaded = samples["imports alone: the floor's + every module lock -f loads [after]"]
    median = statistics.median
    over = median(a[0] - f[0] for a, f in zip(after, floor, strict=True)) * 1000
    imports = median(m[0] - b[0] for m, b in zip(loaded, bare, strict=True)) * 1000
    budget = median(0.2 * f[0] for f in floor) * 1000
    count, ours, others, theirs = made
    return (
        f"\nlock -f [after] takes {over:.1f} ms more than the floor; 1.2x leaves {budget:.1f} ms. Importing "
        f"what it loads beyond the floor's modules takes {imports:.1f} ms (medians of per-run differences). "
        f"While it runs, CPython builds {count:.0f} of envguard's dataclasses ({ours:.1f} ms; rattler "
        f"builds {others:.0f}, {theirs:.1f} ms, in the floor too)."
    )


if __name__ == "__main__":
    raise SystemExit(main())
