"""Benchmark (issue 28): what the target lock, the journal and clean's safer reading cost, side by side with
the tree before them. Each case runs the console command (`python -m envguard ...`) from two source trees -
this one and `--base DIR` (`git archive <commit> | tar -x -C DIR`) - in the same rounds, in a shuffled order,
on the same warm package cache; prints medians, the new/base ratio of medians and the median of per-round
ratios, of wall time and of the command's CPU time.

    git archive 01c13cd | tar -x -C /tmp/base
    python scripts/bench/bench_target.py --base /tmp/base --bulk 300 --rounds 11

Cases: `create -f environment.yml --prefix P --no-lock` into a new prefix (a lock file and a journal),
`create ... --force` over the environment the previous case made (the journal, the rename aside, the deletion
of the old one), `create` from the same channel served over HTTP into an empty package cache (rattler
downloads the archives itself: the new tree links in a child process), and `clean --cache PKGS --json` (a dry
run: an mtime per package, /proc/self/mountinfo, mount checks while measuring).
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import fixture_channel  # noqa: E402


def timed(tree: Path, argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command: user + system, every thread): CPU time shows the work even
    when other jobs share the machine and make wall time noisy."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-m", "envguard", *argv]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: envguard {' '.join(argv)} exited {done.returncode}: {done.stderr[-500:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="a source tree of the commit to compare")
    parser.add_argument("--bulk", type=int, default=300, help="extra packages in the environment")
    parser.add_argument("--rounds", type=int, default=11, help="measured rounds (after one warm-up)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="envguard-bench-target-"))
    try:
        return run(work, args.base.resolve(), args.bulk, args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, base: Path, bulk: int, rounds: int) -> int:
    channels = fixture_channel.build_channels(work / "channels", bulk=bulk)
    specs = ["python=3.11", *[r.name for r in fixture_channel.bulk_recipes(bulk)]]
    yml = work / "environment.yml"
    channel = channels["forge"].resolve().as_uri()
    yml.write_text("channels:\n  - " + channel + "\ndependencies:\n" + "".join(f"  - {s}\n" for s in specs))
    served = work / "served.yml"
    home = work / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "ENVGUARD_CACHE_DIR": str(home / ".cache" / "envguard"),
        "ENVGUARD_BACKEND": "embedded",
    }
    pkgs = home / ".cache" / "envguard" / "pkgs"
    trees = {"base": base, "new": REPO}
    http = [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"]
    server = subprocess.Popen(  # the channel over HTTP, for the case where rattler downloads
        [*http, "--directory", str(work / "channels")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = server.stdout.readline().split(" port ")[1].split()[0]
        served.write_text(yml.read_text().replace(channel, f"http://127.0.0.1:{port}/forge"))
        return measure(work, trees, yml, served, home, rounds, bulk, env, pkgs)
    finally:
        server.kill()
        server.wait()


def measure(
    work: Path,
    trees: dict[str, Path],
    yml: Path,
    served: Path,
    home: Path,
    rounds: int,
    bulk: int,
    env: dict[str, str],
    pkgs: Path,
) -> int:
    graveyard = work / "graveyard"
    graveyard.mkdir()
    buried = [0]

    def bury(path: Path) -> None:  # a rename: deleting between cases would bill the disk to the next case
        if path.exists():
            buried[0] += 1
            os.rename(path, graveyard / str(buried[0]))

    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    cases = ("create", "create --force", "create from HTTP, empty cache", "clean dry run")
    order = [(case, tree) for case in cases for tree in trees]
    shuffle = random.Random(28).shuffle
    for round_number in range(rounds + 1):
        if round_number:
            shuffle(order)
        for case, name in order:
            tree = trees[name]
            prefix = work / f"env-{name}"
            create = ["create", "-f", str(yml), "--prefix", str(prefix), "--no-lock"]
            if case == "create":
                bury(prefix)
                argv = create
            elif case.startswith("create from HTTP"):
                bury(prefix)
                bury(home / ".cache" / "envguard" / f"pkgs-{name}")
                argv = ["create", "-f", str(served), "--prefix", str(prefix), "--no-lock"]
            elif case == "create --force":
                if not prefix.exists():
                    timed(tree, create, env)
                argv = [*create, "--force"]
            else:
                argv = ["clean", "--cache", str(pkgs), "--json"]
            os.sync()
            own = {**env, "ENVGUARD_PKGS_DIR": str(home / ".cache" / "envguard" / f"pkgs-{name}")}
            seconds = timed(tree, argv, own if case.startswith("create from HTTP") else env)
            if round_number:
                samples.setdefault((case, name), []).append(seconds)
    print(f"{bulk + 1} packages, {rounds} rounds (after a warm-up), shuffled order; seconds\n")
    print("| case | clock | base median | new median | new/base (medians) | new/base (per-round median) |")
    print("|---|---|---:|---:|---:|---:|")
    for case in cases:
        for clock, pick in (("wall", 0), ("CPU", 1)):
            old = [sample[pick] for sample in samples[(case, "base")]]
            new = [sample[pick] for sample in samples[(case, "new")]]
            paired = statistics.median(n / o for n, o in zip(new, old, strict=True))
            print(
                f"| `{case}` | {clock} | {statistics.median(old):.3f} | {statistics.median(new):.3f} | "
                f"{statistics.median(new) / statistics.median(old):.2f}x | {paired:.2f}x |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
