"""Which YAML emitter writes conda-lock.yml: envguard's block emitter or PyYAML's C dumper (CSafeDumper)?

    python scripts/bench/bench_yaml.py [--packages 300] [--runs 30]

Renders the same 300-package lock document (realistic entries: dependencies, URLs, hashes) with both, checks
the output is byte-identical, and times them interleaved (process CPU time, medians, ratio), with
envguard's `scalar()` memo cleared before every run and once without the memo. The faster byte-identical one
is kept.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import yaml

from envguard.formats import yaml as emitter
from envguard.formats.condalock.write import package_entry
from envguard.model import Package


def document(count: int) -> dict[str, object]:
    packages = [
        Package(
            "conda",
            f"pkg{i:04d}",
            f"1.{i % 17}.{i % 5}",
            f"py311h{i:07x}_0",
            i % 3,
            "conda-forge",
            "linux-64",
            f"https://conda.anaconda.org/conda-forge/linux-64/pkg{i:04d}-1.{i % 17}-py311h{i:07x}_0.conda",
            f"{i:032x}",
            f"{i:064x}",
            depends=tuple(f"dep{j} >=1.{j}" for j in range(i % 9)),
        )
        for i in range(count)
    ]
    entries = [package_entry(p, "linux-64") for p in packages]
    meta = {
        "content_hash": {"linux-64": "0" * 64},
        "channels": [{"url": "conda-forge", "used_env_vars": []}],
        "platforms": ["linux-64"],
        "sources": ["environment.yml"],
        "custom_metadata": {"envguard.version": "0.1"},
    }
    return {"version": 1, "metadata": meta, "package": entries}


def pyyaml_c(doc: dict[str, object]) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(
        doc, Dumper=dumper, default_flow_style=False, sort_keys=False, allow_unicode=True, width=1 << 30
    )
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", type=int, default=300)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    doc = document(args.packages)
    ours, theirs = emitter.dump(doc), pyyaml_c(doc)
    identical = ours == theirs
    memo = emitter.scalar.cache_clear  # each run starts cold, as one `envguard lock` process does
    unmemoised = emitter.scalar.__wrapped__

    def without_memo(document: dict[str, object]) -> str:
        emitter.scalar = unmemoised  # type: ignore[assignment]
        try:
            return emitter.dump(document)
        finally:
            emitter.scalar = memoised

    memoised = emitter.scalar
    assert without_memo(doc) == ours
    cases = (
        ("envguard emitter", emitter.dump),
        ("envguard emitter, scalar() not memoised", without_memo),
        ("PyYAML CSafeDumper", pyyaml_c),
    )
    times: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(args.runs):
        for name, render in cases:
            memo()
            start = time.process_time()
            render(doc)
            times[name].append(time.process_time() - start)
    floor = statistics.median(times["envguard emitter"])
    print(f"{args.packages}-package lock, {args.runs} interleaved runs; byte-identical: {identical}")
    print("| emitter | median CPU ms | ratio |\n|---|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median * 1000:.1f} | {median / floor:.2f}x |")
    if not identical:
        for number, (a, b) in enumerate(zip(ours.splitlines(), theirs.splitlines(), strict=False), 1):
            if a != b:
                print(f"first difference at line {number}:\n  ours:   {a!r}\n  pyyaml: {b!r}")
                break


if __name__ == "__main__":
    main()
