"""What envguard's conda plugin costs conda, side by side: the real conda 26.7.1 without and with envguard
installed in its base (../shared/tools/conda-kit), in one run.

    python scripts/bench/bench_condaplugin.py [--runs 7] [--packages 300] [--work DIR]

Builds two kits (the second with this checkout pip-installed into conda's base, so conda loads the plugin),
the fixture channels plus `--packages` bulk packages and `fill000`, and in each kit a prefix made by conda
(python, numpy, pip and every bulk package), locked by `envguard lock --no-probe` (which records the lock in
it). Then times, interleaved round-robin, each as a fresh subprocess (wall and the child's CPU time):
  - `conda --version`        (conda's fast path: no plugin is loaded, with or without envguard)
  - `conda doctor --list`    (the plugin manager loads every entry point: envguard's start-up cost)
  - `conda list -p ENV`      (a common command: plugins loaded, no envguard hook runs)
  - `conda doctor -p ENV`    (conda's own checks; with envguard, its two checks too)
  - `conda install fill000` + `conda remove fill000` (with envguard, the post-command check after each)
Prints a Markdown table of medians and with/without ratios, and the load average.

    python scripts/bench/bench_condaplugin.py --hook-only --base WORKTREE [--runs 9] [--sizes 15,5000,50000]

times the post-command hook alone as the recorded lock grows, this tree against another (main), without
conda: one environment of 15 packages (synth_prefix.py, no payload files) follows, in turn, a recorded lock
of 15 packages (its own) and locks of 5,000 and 50,000 packages (its own 15 for linux-64, the rest for
osx-64: the environment matches each, only the lock's size changes). Before each run a package record is
added or removed (as `conda install`/`remove` do: check's stored verdict misses), then the hook runs as conda
runs it (`envguard.condaplugin.actions.after_command(PREFIX)`) in a fresh interpreter with PYTHONPATH set to
each tree and a cache folder of each tree's own, interleaved after one warm-up each; medians of the child's
CPU time (user + sys) and wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fixture_channel
import synth_prefix
import yaml
from bench_conda import KIT, REPO, Case, measure

ENVGUARD = Path(sys.executable).with_name("envguard")


def build(work: Path, packages: int) -> list[str]:
    """The channels' URLs (the fixture forge with `packages` bulk packages, and one with fill000)."""
    forge = work / "channels" / "forge"
    if not (forge / "linux-64" / "repodata.json").is_file():
        fixture_channel.build_channels(work / "channels", bulk=packages)
    extra = work / "channels" / "extra"
    if not (extra / "linux-64" / "repodata.json").is_file():
        recipe = fixture_channel.Recipe(
            name="fill000", version="1.0.0", build="h0000000_0", files={"share/fill000/a.txt": "x\n"}
        )
        fixture_channel.build_package(recipe, extra)
        fixture_channel.index(extra)
    return [forge.resolve().as_uri(), extra.resolve().as_uri()]


def kit(work: Path, name: str, urls: list[str], with_envguard: bool) -> Path:
    """ROOT of a built kit (and envguard installed into its base when asked)."""
    root = work / name
    subprocess.run(["bash", str(KIT), str(root), *urls], check=True, capture_output=True)
    if with_envguard:
        pip = [str(root / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", "-e", str(REPO)]
        subprocess.run(pip, check=True, capture_output=True)
    return root


def environment(work: Path) -> dict[str, str]:
    """One environment for both kits: each kit's wrapper picks its own condarc (CONDARC is left unset)."""
    env = {
        **os.environ,
        "HOME": str(work / "home"),
        "ENVGUARD_CONDA_HOME": str(work / "home"),
        "ENVGUARD_CACHE_DIR": str(work / "envguard-cache"),
    }
    for var in ("CONDARC", "CONDA_PREFIX", "VIRTUAL_ENV", "CONDA_PKGS_DIRS", "CONDA_OVERRIDE_CUDA"):
        env.pop(var, None)
    return env


def prefix(root: Path, packages: int, env: dict[str, str]) -> Path:
    """A conda-made prefix in the kit, locked by envguard (the lock recorded in it)."""
    target = root / "bench-env"
    if not (target / "conda-meta").is_dir():
        bulk = [r.name for r in fixture_channel.bulk_recipes(packages)]
        conda = [str(root / "bin" / "conda"), "create", "-y", "-q", "-p", str(target)]
        subprocess.run(
            [*conda, "python=3.11", "numpy=1.26", "pip", *bulk], check=True, env=env, capture_output=True
        )
        lock = [str(ENVGUARD), "lock", str(target), "--no-probe", "-o", str(root / "bench.lock.yml")]
        subprocess.run(lock, check=True, env=env, capture_output=True)
    return target


def cases(root: Path, env_prefix: Path) -> dict[str, Case]:
    conda = str(root / "bin" / "conda")
    p = shlex.quote(str(env_prefix))
    cycle = f"{conda} install -y -q -p {p} fill000 && {conda} remove -y -q -p {p} fill000"
    return {
        "conda --version": Case([conda, "--version"]),
        "conda doctor --list": Case([conda, "doctor", "--list"]),
        "conda list -p ENV": Case([conda, "list", "-p", str(env_prefix)]),
        "conda doctor -p ENV": Case([conda, "doctor", "-p", str(env_prefix)]),
        "conda install + remove fill000": Case(["bash", "-c", cycle]),
    }


def report(times: dict[str, list[list[float]]], packages: int, runs: int) -> str:
    load = os.getloadavg()
    rows = [
        "conda 26.7.1 (classic solver) without and with envguard's plugin; a conda-made prefix of "
        f"{packages} packages locked by envguard; {runs} runs each, interleaved; "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f}.",
        "",
        "| command | without (ms) | with envguard (ms) | wall ratio | CPU without (ms) | CPU with (ms) "
        "| CPU ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, (with_, without, with_cpu, without_cpu) in times.items():
        m = [statistics.median(v) * 1000 for v in (without, with_, without_cpu, with_cpu)]
        cells = [f"{m[0]:.0f}", f"{m[1]:.0f}", f"{m[1] / m[0]:.2f}", f"{m[2]:.0f}", f"{m[3]:.0f}"]
        rows.append(f"| {name} | {' | '.join(cells)} | {m[3] / m[2]:.2f} |")
    return "\n".join(rows)


HOOK = "import sys; from envguard.condaplugin.actions import after_command; after_command(sys.argv[1])"
FILL = {
    "name": "fill000",
    "version": "1.0.0",
    "build": "h0_0",
    "build_number": 0,
    "depends": [],
    "files": [],
    "subdir": "linux-64",
    "channel": "https://conda.anaconda.org/conda-forge/linux-64",
    "url": "https://conda.anaconda.org/conda-forge/linux-64/fill000-1.0.0-h0_0.conda",
}


def locks(work: Path, sizes: list[int], env: dict[str, str]) -> tuple[Path, dict[int, Path]]:
    """The 15-package environment and a lock of each size it matches (its packages plus osx-64 ones)."""
    prefix = synth_prefix.build(work / "env", 15, 0, payload=False)
    own = work / "lock-15.yml"
    if not own.exists():
        lock = [sys.executable, "-m", "envguard", "lock", str(prefix), "--no-probe", "-o", str(own)]
        subprocess.run(lock, check=True, env={**env, "PYTHONPATH": str(REPO)}, capture_output=True)
    base = yaml.safe_load(own.read_text())
    out = {}
    for size in sizes:
        path = work / f"lock-{size}.yml"
        if size > 15 and not path.exists():
            data = json.loads(json.dumps(base))
            template = data["package"][-1]
            for index in range(size - 15):
                name = f"other{index:05d}"
                item = {**template, "name": name, "platform": "osx-64", "version": "1.0", "build": "h0_0"}
                item["url"] = f"https://conda.anaconda.org/conda-forge/osx-64/{name}-1.0-h0_0.conda"
                data["package"].append(item)
            data["metadata"]["platforms"] = ["linux-64", "osx-64"]
            data["metadata"]["content_hash"]["osx-64"] = "0" * 64
            path.write_text(yaml.safe_dump(data, sort_keys=False))
        out[size] = own if size == 15 else path
    return prefix, out


def record(prefix: Path, lock: Path, env: dict[str, str]) -> None:
    """Tie the environment to `lock` as `envguard lock PREFIX -o LOCK` does (etc/envguard/lock.json)."""
    code = "import sys; from pathlib import Path; from envguard.prefix.lockref import remember; "
    code += "remember(Path(sys.argv[1]), Path(sys.argv[2]))"
    subprocess.run([sys.executable, "-c", code, str(prefix), str(lock)], check=True, env=env)


def hook(prefix: Path, env: dict[str, str]) -> tuple[float, float]:
    fill = prefix / "conda-meta" / "fill000-1.0.0-h0_0.json"
    if fill.exists():
        fill.unlink()
    else:
        fill.write_text(json.dumps(FILL))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", HOOK, str(prefix)], env=env, capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def hook_only(base: Path, runs: int, sizes: list[int], work: Path) -> str:
    """The Markdown table of the hook's cost per lock size, this tree and `base`."""
    trees = {"this tree": REPO, "base": base.resolve()}
    envs = {
        name: {
            **os.environ,
            "PYTHONPATH": str(tree),
            "HOME": str(work / "home"),
            "ENVGUARD_CACHE_DIR": str(work / f"cache-{index}"),
        }
        for index, (name, tree) in enumerate(trees.items())
    }
    prefix, made = locks(work, sizes, envs["this tree"])
    times: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for size, lock in made.items():
        for name in trees:
            record(prefix, lock, envs[name])
            hook(prefix, envs[name])  # warm-up: the parse cache of this lock
            times[(size, name)] = []
        for _ in range(runs):
            for name in trees:
                record(prefix, lock, envs[name])
                times[(size, name)].append(hook(prefix, envs[name]))
    load = os.getloadavg()
    rows = [
        "The hook after a command: an environment of 15 packages following a recorded lock of N packages; "
        f"{runs} runs each, interleaved; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {load[0]:.2f} {load[1]:.2f}.",
        "",
        "| lock (packages, MB) | base CPU (ms) | this tree CPU (ms) | base wall (ms) | this tree wall (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    for size, lock in made.items():
        cpu = {n: statistics.median(c for _w, c in times[(size, n)]) * 1000 for n in trees}
        wall = {n: statistics.median(w for w, _c in times[(size, n)]) * 1000 for n in trees}
        rows.append(
            f"| {size:,} ({lock.stat().st_size / 1e6:.1f} MB) | {cpu['base']:.0f} | {cpu['this tree']:.0f} | "
            f"{wall['base']:.0f} | {wall['this tree']:.0f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--packages", type=int, default=300, help="bulk packages in the conda-made prefixes")
    parser.add_argument("--work", type=Path, help="reuse this folder (default: a temp folder, removed after)")
    parser.add_argument("--hook-only", action="store_true", help="the post-command hook alone, per lock size")
    parser.add_argument("--base", type=Path, help="--hook-only: the other tree (a worktree of main)")
    parser.add_argument("--sizes", default="15,5000,50000", help="--hook-only: the locks' package counts")
    args = parser.parse_args(argv)
    if args.hook_only:
        if args.base is None:
            parser.error("--hook-only needs --base WORKTREE")
        work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-hook-"))
        work.mkdir(parents=True, exist_ok=True)
        try:
            print(hook_only(args.base, args.runs, [int(s) for s in args.sizes.split(",")], work))
        finally:
            if args.work is None:
                shutil.rmtree(work, ignore_errors=True)
        return 0
    if not KIT.is_file():
        print(f"no conda kit at {KIT}: nothing to measure", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-condaplugin-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        urls = build(work, args.packages)
        without, with_ = kit(work, "without", urls, False), kit(work, "with", urls, True)
        env = environment(work)
        prefixes = prefix(without, args.packages, env), prefix(with_, args.packages, env)
        count = sum(1 for p in (prefixes[0] / "conda-meta").iterdir() if p.suffix == ".json")
        plain, plugged = cases(without, prefixes[0]), cases(with_, prefixes[1])
        # bench_conda's (ours, theirs) pairs: here (with envguard, without)
        times = measure({name: (plugged[name], plain[name]) for name in plain}, args.runs, env)
        print(report(times, count, args.runs))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
