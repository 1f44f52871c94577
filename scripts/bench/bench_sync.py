"""Benchmark `envguard sync` on a ~300-package environment from a local channel, side by side with what it
replaces, interleaved in one run (issue 26's targets):

    python scripts/bench/bench_sync.py                 # 300 bulk packages, 7 rounds
    python scripts/bench/bench_sync.py --bulk 300 --rounds 11

- a one-package sync (the environment one package off its lock: `sync --yes` links it) against `create --lock
  --force` of the same lock (the full rebuild check's fix line used to print): target <= 0.3x;
- `sync` of an environment already in sync against an unchanged `check` of it: target <= the check + 50 ms.

Every case is a fresh subprocess of the console script (start-up and imports are part of what a user waits
for), with its user+system CPU time beside the wall time. Each round runs every case once in an order
shuffled from round to round (seeded); a case's setup (making the environment one package off, or in sync
with the stored answer in place) runs before it, outside its timing. The first round is a discarded warm-up.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import fixture_channel  # noqa: E402

ENVGUARD = str(Path(sys.executable).parent / "envguard")


def envguard(*argv: str, check: bool = True) -> None:
    """The console script, its output discarded (a failing setup step says why)."""
    done = subprocess.run([ENVGUARD, *argv], capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise SystemExit(f"envguard {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, the child's user+system CPU seconds) of one run of the console script."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([ENVGUARD, *argv], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"envguard {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def one_off(lock: Path, name: str, out: Path) -> Path:
    """A copy of the lock without one package (a leaf: nothing depends on it)."""
    lines = lock.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line == f"- name: {name}\n")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("- name: ")), len(lines))
    out.write_text("".join(lines[:start] + lines[end:]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bulk", type=int, default=300, help="extra packages in the environment")
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds (after one warm-up)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="envguard-bench-sync-"))
    os.environ.update(
        HOME=str(work / "home"),
        XDG_CACHE_HOME=str(work / "home" / ".cache"),
        ENVGUARD_CACHE_DIR=str(work / "home" / ".cache" / "envguard"),
    )
    for var in ("CONDA_ENVS_PATH", "CONDA_OVERRIDE_CUDA", "ENVGUARD_BACKEND", "CONDA_PREFIX", "VIRTUAL_ENV"):
        os.environ.pop(var, None)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: compiled bytecode
    try:
        return run(work, args.bulk, args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, bulk: int, rounds: int) -> int:
    channels = fixture_channel.build_channels(work / "channels", bulk=bulk)
    channel = channels["forge"].resolve().as_uri()
    names = [r.name for r in fixture_channel.bulk_recipes(bulk)]
    project = work / "project"
    project.mkdir()
    yml = project / "environment.yml"
    yml.write_text(
        "channels:\n  - "
        + channel
        + "\ndependencies:\n  - python=3.11\n"
        + "".join(f"  - {n}\n" for n in names)
    )
    lock = project / "conda-lock.yml"
    envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock))
    smaller = one_off(lock, names[-1], project / "one-off.yml")
    env = work / "env"
    backend = ["--backend", "embedded"]
    envguard("create", "--lock", str(lock), "-p", str(env), *backend)

    def off_by_one() -> None:  # the environment one package off its lock (outside the timing)
        envguard("sync", str(env), "--lock", str(smaller), "--yes", *backend)

    def in_sync() -> None:  # in sync, the stored answers in place (outside the timing)
        envguard("sync", str(env), "--lock", str(lock), "--yes", *backend)
        envguard("sync", str(env), "--lock", str(lock))
        envguard("check", str(env), "--lock", str(lock))

    cases: dict[str, tuple[Callable[[], None], list[str]]] = {
        "envguard create --lock --force (full rebuild)": (
            in_sync,
            ["create", "--lock", str(lock), "-p", str(env), "--force", *backend],
        ),
        "envguard sync --yes, one package off": (
            off_by_one,
            ["sync", str(env), "--lock", str(lock), "--yes", *backend],
        ),
        "envguard check, unchanged": (in_sync, ["check", str(env), "--lock", str(lock)]),
        "envguard sync, already in sync": (in_sync, ["sync", str(env), "--lock", str(lock)]),
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    order = list(cases.items())
    shuffle = random.Random(26).shuffle  # seeded: two runs take the same orders
    for round_number in range(rounds + 1):
        if round_number:
            shuffle(order)
        for name, (setup, argv) in order:
            setup()
            os.sync()  # the setup's writes are flushed, not billed to the case
            result = timed(argv)
            if round_number:
                samples[name].append(result)
    print(table(samples, bulk, rounds))
    return 0


def table(samples: dict[str, list[tuple[float, float]]], bulk: int, rounds: int) -> str:
    median = statistics.median
    wall = {name: median(w for w, _c in values) for name, values in samples.items()}
    cpu = {name: median(c for _w, c in values) for name, values in samples.items()}
    lines = [
        f"sync of a {bulk + 2}-package environment from a local file:// channel (median of {rounds} rounds, "
        f"interleaved, each a fresh process of the console script; python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs)",
        "",
        "| Operation | Wall median (s) | CPU median (s) |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {wall[name]:.3f} | {cpu[name]:.3f} |" for name in samples]
    create, one = (
        samples["envguard create --lock --force (full rebuild)"],
        samples["envguard sync --yes, one package off"],
    )
    check, synced = samples["envguard check, unchanged"], samples["envguard sync, already in sync"]
    paired = median(s[0] / c[0] for s, c in zip(one, create, strict=True))
    ratio = (
        wall["envguard sync --yes, one package off"] / wall["envguard create --lock --force (full rebuild)"]
    )
    cpu_ratio = (
        cpu["envguard sync --yes, one package off"] / cpu["envguard create --lock --force (full rebuild)"]
    )
    extra = median(s[0] - c[0] for s, c in zip(synced, check, strict=True))
    extra_cpu = median(s[1] - c[1] for s, c in zip(synced, check, strict=True))
    met = "met" if ratio <= 0.3 else "NOT met"
    lines += [
        "",
        f"one-package sync / create --lock --force: {ratio:.2f}x wall ({paired:.2f}x per round), "
        f"{cpu_ratio:.2f}x CPU — target <= 0.30x: {met}",
        f"sync in sync - unchanged check: {extra * 1000:+.1f} ms wall, {extra_cpu * 1000:+.1f} ms CPU "
        f"(per-round medians) — target <= +50 ms: {'met' if extra <= 0.05 else 'NOT met'}",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
