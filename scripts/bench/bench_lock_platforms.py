"""`envguard lock -f environment.yml` for 4 platforms, before and after, beside raw rattler with one Gateway.

    python scripts/bench/bench_lock_platforms.py [--runs 11] [--base COMMIT] [--work DIR]

A local file:// channel (scripts/fixture_channel.py), an environment.yml declaring linux-64, linux-aarch64,
osx-64 and osx-arm64, and, interleaved as fresh processes: envguard before (--base) and after (the working
tree), and the floor: one Python process solving the same specs for the 4 platforms with py-rattler and one
shared Gateway (no envguard). Target (issue 12): lock -f for 4 platforms <= 1.2x raw rattler with a shared
Gateway. A second floor is the same process also reading the environment.yml with PyYAML (what any Python
tool that takes one pays; rattler does not read environment.yml). Prints medians of wall and child CPU time,
ratios to the first floor and the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fixture_channel
from bench_scale import BASE_COMMIT, archive, environments, load, measure

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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
