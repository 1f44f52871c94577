"""Benchmark issue 41's SBOM side by side with its peer, in one run.

    python scripts/bench/bench_sbom.py [--runs 5] [--venv DIR] [--work DIR]

1. A real venv (default: the interpreter running this script's own, with its ~170 packages): `envguard export
   VENV --format cyclonedx` and `cyclonedx-py environment VENV/bin/python` (cyclonedx-bom), interleaved
   round-robin, each a fresh subprocess, CPU time of the child; medians and the ratio; then what each holds
   (components, dependency edges, licensed components).
2. Name length: `cyclonedx.render` of one pip package whose name is N characters, N from 10k to 160k, in this
   process; the time per character stays flat where the writer is linear. And the credential scrubber every
   printed text goes through (`channels.scrub`), its URL pattern before (unbounded scheme: quadratic in a run
   of letters, what made a 20k-character name's SBOM take 6.5 s) and now, on the same texts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_snapshot import bench_env, launcher_argv, measure


def holds(path: Path) -> tuple[int, int, int]:
    """(components, dependency edges outside the root, components with a licence) of a CycloneDX JSON file."""
    data = json.loads(path.read_text())
    root = data.get("metadata", {}).get("component", {}).get("bom-ref")
    edges = sum(len(d.get("dependsOn", [])) for d in data["dependencies"] if d["ref"] != root)
    return len(data["components"]), edges, sum(1 for c in data["components"] if c.get("licenses"))


def peer(venv: Path, runs: int, work: Path) -> str:
    env = bench_env(work / "cache")
    tree = Path(__file__).resolve().parents[2]
    ours, theirs = work / "envguard.json", work / "cyclonedx-py.json"
    tool = Path(sys.executable).parent / "cyclonedx-py"
    cmds = {
        "envguard export --format cyclonedx": [
            *launcher_argv(tree),
            "export",
            str(venv),
            "--format",
            "cyclonedx",
            "-o",
            str(ours),
        ],
        "cyclonedx-py environment": [str(tool), "environment", "--sv", "1.6", "-o", str(theirs), str(venv)],
    }
    times = measure(cmds, runs, env, clock="cpu")
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["cyclonedx-py environment"]
    lines = [f"venv {venv}, {runs} runs each, interleaved, CPU seconds of the child (median)", ""]
    lines += [
        "| command | median s | vs cyclonedx-py | components | edges | licensed |",
        "|---|---|---|---|---|---|",
    ]
    for (name, value), path in zip(medians.items(), (ours, theirs), strict=True):
        components, edges, licensed = holds(path)
        lines.append(f"| {name} | {value:.2f} | {value / base:.2f}x | {components} | {edges} | {licensed} |")
    return "\n".join(lines)


def name_length() -> str:
    from envguard.formats import cyclonedx
    from envguard.model import Package, make_environment

    lines = ["", "| name length | render s (median of 3) | µs per character |", "|---|---|---|"]
    for size in (10_000, 40_000, 160_000):
        env = make_environment(kind="venv", packages=[Package("pip", "a" * size, "1.0")])
        samples = []
        for _ in range(3):
            start = time.perf_counter()
            cyclonedx.render(env)
            samples.append(time.perf_counter() - start)
        value = statistics.median(samples)
        lines.append(f"| {size:,} | {value:.3f} | {value / size * 1e6:.2f} |")
    return "\n".join(lines)


def scrubber() -> str:
    import re

    from envguard import channels

    before = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<rest>[^\s'\"<>]*)")
    lines = ["", "| letters before a URL | scrub before s | scrub now s | ratio |", "|---|---|---|---|"]
    for size in (5_000, 10_000, 20_000):
        text = "a" * size + " @ https://u:PW@h/x"
        timings = {}
        for name, pattern in (("before", before), ("now", channels._URL)):
            start = time.perf_counter()
            pattern.sub(channels._clean_url, text)
            timings[name] = time.perf_counter() - start
        ratio = timings["before"] / timings["now"]
        lines.append(f"| {size:,} | {timings['before']:.3f} | {timings['now']:.5f} | {ratio:.0f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--venv", type=Path, default=Path(sys.prefix))
    parser.add_argument("--work", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-sbom-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        print(peer(args.venv, args.runs, work))
    print(name_length())
    print(scrubber())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
