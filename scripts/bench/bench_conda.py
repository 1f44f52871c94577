"""Benchmark envguard against the real conda 26.7.1 CLI (../shared/tools/conda-kit, classic solver), in one
run.

    python scripts/bench/bench_conda.py [--runs 9] [--packages 300] [--create-packages 30] [--work DIR]
        [--only TEXT]

Builds the kit, the fixture channels plus `--packages` bulk packages (scripts/fixture_channel.py), and a
prefix made BY CONDA (`conda create` python, numpy, pip and every bulk package). Then times, interleaved
round-robin, each as a fresh subprocess (wall time and the child's CPU time, user + sys):
  - `envguard snapshot --no-probe`        vs `conda list --json`
  - `envguard export --full`              vs `conda env export`
  - `envguard export` (pinned)            vs `conda env export --from-history`
  - `envguard check --files --no-cache`   vs `conda doctor` (both hash every installed file)
  - `envguard clean` (a dry run)          vs `conda clean --all --dry-run`, conda on PATH for both
  - `envguard create --backend embedded`  vs `conda create` (classic solver) of python, numpy and
    `--create-packages` bulk packages into a fresh prefix, package caches warm for both (removed between runs)
  - `envguard lock -f environment.yml`    vs `conda-lock lock --conda <the kit's conda>` of the same file
    (linux-64, no CUDA; conda-lock solves through the kit's conda, classic solver) where conda-lock is
    installed
`--only TEXT` keeps the pairs whose name contains TEXT (repeatable).
Prints a Markdown table of medians and envguard/conda ratios (below 1 is envguard faster). Record `uptime`
beside the figures: other work on the machine moves wall times, CPU times much less.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fixture_channel

REPO = Path(__file__).resolve().parents[2]
KIT = REPO.parent / "shared" / "tools" / "conda-kit" / "make-conda.sh"


@dataclass(frozen=True)
class Case:
    argv: list[str]
    before: Callable[[], None] | None = None


def build(work: Path, packages: int, create_packages: int) -> tuple[Path, Path, Path]:
    """(conda exe, a conda-made prefix, an environment.yml for the create pair)."""
    if not (
        work / "channels" / "forge" / "linux-64" / "repodata.json"
    ).is_file():  # --work reuse: keep hashes
        fixture_channel.build_channels(work / "channels", bulk=packages)
    forge = (work / "channels" / "forge").resolve().as_uri()
    subprocess.run(["bash", str(KIT), str(work / "conda"), forge], check=True, capture_output=True)
    conda = work / "conda" / "bin" / "conda"
    bulk = [r.name for r in fixture_channel.bulk_recipes(packages)]
    prefix = work / "env"
    if not (prefix / "conda-meta").is_dir():
        subprocess.run(
            [
                str(conda),
                "create",
                "--yes",
                "--quiet",
                "--prefix",
                str(prefix),
                "python=3.11",
                "numpy=1.26",
                "pip",
                *bulk,
            ],
            check=True,
            capture_output=True,
            env=environment(work),
        )
    yml = work / "create" / "environment.yml"
    yml.parent.mkdir(exist_ok=True)
    deps = ", ".join(["python=3.11", "numpy=1.26", *bulk[:create_packages]])
    yml.write_text(f"channels: [{forge}]\ndependencies: [{deps}]\n")
    lock = work / "conda-lock.yml"
    envguard = Path(sys.executable).parent / "envguard"
    subprocess.run(
        [str(envguard), "lock", str(prefix), "--no-probe", "-o", str(lock)],
        check=True,
        capture_output=True,
        env=environment(work),
    )
    return conda, prefix, yml


def environment(work: Path) -> dict[str, str]:
    """conda's world for both tools: the kit's HOME and CONDARC, warm package caches of their own."""
    env = {
        **os.environ,
        "CONDARC": str(work / "conda" / "condarc"),
        "ENVGUARD_CONDA_HOME": str(work / "home"),
        "HOME": str(work / "home"),
        "ENVGUARD_CACHE_DIR": str(work / "envguard-cache"),
        "ENVGUARD_PKGS_DIR": str(work / "envguard-pkgs"),
    }
    env["PATH"] = (
        f"{work / 'conda' / 'bin'}{os.pathsep}{env.get('PATH', '')}"  # conda on PATH, as its users have
    )
    for var in ("CONDA_PREFIX", "CONDA_PKGS_DIRS", "PYTHONDONTWRITEBYTECODE", "CONDA_OVERRIDE_CUDA"):
        env.pop(var, None)
    return env


def pairs(conda: Path, prefix: Path, yml: Path, work: Path) -> dict[str, tuple[Case, Case]]:
    bindir = Path(sys.executable).parent
    envguard = shutil.which("envguard", path=str(bindir)) or str(bindir / "envguard")
    p = str(prefix)
    made = {"envguard": work / "made-envguard", "conda": work / "made-conda"}

    def wipe(tool: str) -> Callable[[], None]:
        return lambda: shutil.rmtree(made[tool], ignore_errors=True)

    cases = {
        "snapshot vs `conda list --json`": (
            Case([envguard, "snapshot", p, "--no-probe"]),
            Case([str(conda), "list", "--json", "-p", p]),
        ),
        "export --full vs `conda env export`": (
            Case([envguard, "export", p, "--full"]),
            Case([str(conda), "env", "export", "-p", p]),
        ),
        "export (pinned) vs `conda env export --from-history`": (
            Case([envguard, "export", p]),
            Case([str(conda), "env", "export", "--from-history", "-p", p]),
        ),
        "check --files vs `conda doctor`": (
            Case([envguard, "check", p, "--lock", str(work / "conda-lock.yml"), "--files", "--no-cache"]),
            Case([str(conda), "doctor", "-p", p]),
        ),
        "clean (dry run) vs `conda clean --all --dry-run`": (
            Case([envguard, "clean"]),
            Case([str(conda), "clean", "--all", "--dry-run", "--yes"]),
        ),
        "create --backend embedded vs `conda create` (classic)": (
            Case(
                [
                    envguard,
                    "create",
                    "-f",
                    str(yml),
                    "--backend",
                    "embedded",
                    "--prefix",
                    str(made["envguard"]),
                    "--no-lock",
                ],
                wipe("envguard"),
            ),
            Case(
                [
                    str(conda),
                    "env",
                    "create",
                    "--yes",
                    "--quiet",
                    "--file",
                    str(yml),
                    "--prefix",
                    str(made["conda"]),
                ],
                wipe("conda"),
            ),
        ),
    }
    lock = lock_pair(conda, yml, work, envguard)
    if lock is not None:
        cases["lock -f vs `conda-lock lock --conda <kit>`"] = lock
    return cases


def lock_pair(conda: Path, yml: Path, work: Path, envguard: str) -> tuple[Case, Case] | None:
    """`envguard lock -f` vs `conda-lock lock --conda <kit>`, or None when conda-lock is not installed."""
    import importlib.util

    if importlib.util.find_spec("conda_lock") is None:
        print("conda-lock is not installed: the lock pair is left out", file=sys.stderr)
        return None
    out = work / "locks"
    out.mkdir(exist_ok=True)
    ours = [envguard, "lock", "-f", str(yml), "--platform", "linux-64", "--no-cuda"]
    theirs = [sys.executable, "-m", "conda_lock", "lock", "--conda", str(conda), "-f", str(yml)]
    theirs += ["-p", "linux-64", "--lockfile", str(out / "conda-lock-tool.yml")]
    return (
        Case([*ours, "-o", str(out / "envguard.yml")]),
        Case(theirs, lambda: (out / "conda-lock-tool.yml").unlink(missing_ok=True)),
    )


def same_lock(ours: Path, theirs: Path) -> str:
    """A line saying whether both tools locked the same packages (name, version, URL)."""
    import yaml

    def keys(path: Path) -> set[tuple[str, str, str]]:
        data = yaml.safe_load(path.read_text())
        return {(p["name"], str(p["version"]), p["url"]) for p in data["package"]}

    a, b = keys(ours), keys(theirs)
    return (
        f"lock pair: both locks name the same {len(a)} packages" if a == b else f"lock pair DIFFERS: {a ^ b}"
    )


def timed(case: Case, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run."""
    if case.before:
        case.before()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(case.argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(
    cases: dict[str, tuple[Case, Case]], runs: int, env: dict[str, str]
) -> dict[str, list[list[float]]]:
    """Per pair: [envguard walls, conda walls, envguard cpus, conda cpus], round-robin after one warm-up
    each."""
    for ours, theirs in cases.values():
        timed(ours, env), timed(theirs, env)
    out: dict[str, list[list[float]]] = {name: [[], [], [], []] for name in cases}
    for _ in range(runs):
        for name, (ours, theirs) in cases.items():
            for index, case in ((0, ours), (1, theirs)):
                wall, cpu = timed(case, env)
                out[name][index].append(wall)
                out[name][index + 2].append(cpu)
    return out


def report(times: dict[str, list[list[float]]], packages: int, runs: int) -> str:
    load = os.getloadavg()
    rows = [
        f"Prefix made by conda 26.7.1 (classic solver): {packages} conda packages; {runs} runs each, "
        "interleaved; "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f}.",
        "",
        "| pair | envguard wall (ms) | conda wall (ms) | wall ratio | envguard CPU (ms) | conda CPU (ms) | "
        "CPU ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, (ours, theirs, ours_cpu, theirs_cpu) in times.items():
        m = [statistics.median(v) * 1000 for v in (ours, theirs, ours_cpu, theirs_cpu)]
        rows.append(
            f"| {name} | {m[0]:.0f} | {m[1]:.0f} | {m[0] / m[1]:.2f} | {m[2]:.0f} | {m[3]:.0f} | "
            f"{m[2] / m[3]:.2f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--packages", type=int, default=300, help="bulk packages in the conda-made prefix")
    parser.add_argument("--create-packages", type=int, default=30, help="bulk packages in the create pair")
    parser.add_argument("--only", action="append", default=[], help="pairs whose name contains this")
    parser.add_argument("--work", type=Path, help="reuse this folder (default: a temp folder, removed after)")
    args = parser.parse_args(argv)
    if not KIT.is_file():
        print(f"no conda kit at {KIT}: nothing to compare against", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-conda-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        conda, prefix, yml = build(work, args.packages, args.create_packages)
        env = environment(work)
        count = sum(1 for p in (prefix / "conda-meta").iterdir() if p.suffix == ".json")
        cases = pairs(conda, prefix, yml, work)
        if args.only:
            cases = {k: v for k, v in cases.items() if any(text in k for text in args.only)}
        print(report(measure(cases, args.runs, env), count, args.runs))
        if any(name.startswith("lock -f") for name in cases):
            print(same_lock(work / "locks" / "envguard.yml", work / "locks" / "conda-lock-tool.yml"))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
