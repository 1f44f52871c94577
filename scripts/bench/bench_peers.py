"""Benchmark envguard's pip side against uv, its real peer, on venvs of 15 and 150 packages (issue 44):

    python scripts/bench/bench_peers.py                  # 15 and 150 packages, 5 rounds
    python scripts/bench/bench_peers.py --sizes 15 --rounds 7
    python scripts/bench/bench_peers.py --baseline DIR     # and an older tree's sync and verify, interleaved

- a one-package repair (the venv one package short of its lock): `envguard sync VENV --lock L --yes` against
  `uv pip sync --python VENV requirements.txt` (the same pins and sha256s): target <= 3x;
- a rebuild of the lock: `envguard verify --lock L` (fresh venv, every wheel's sha256 proved, installed, then
  checked against the lock) against `uv venv` + `uv pip sync` into a fresh venv: target <= 3x.

The venvs are built offline from the machine's local PyPI mirror (file:///opt/pypi/simple, or --index): pure
Python wheels, `--no-deps`, the first N projects by name. Both tools share one warm uv cache and envguard its
warm package cache (a first, discarded round warms them and writes envguard's bytecode, as an installed
envguard has it: PYTHONDONTWRITEBYTECODE is unset). Every round runs each case once in an order shuffled
from round to round (seeded), each a fresh process; medians of wall and of CPU (user+system of the child), and
envguard ÷ uv, with the load average beside each. Where the time goes is shown by stage: sync's from
`sync --timings --json` (a case of its own in the same rounds), verify's from its --json report; "the rest" is
the wall time outside the stages (Python's start-up, the command-line parser, printing). The floor is
`python -c pass` plus uv's own time: no Python tool that runs uv can be faster.
"""

from __future__ import annotations

import argparse
import json
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
from urllib.parse import unquote

import yaml

ENVGUARD = [sys.executable, "-m", "envguard"]
UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv"
PYTHON = sys.executable


def run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-600:]}")
    return done


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    done = run(argv, env)
    return time.perf_counter() - start, done.stdout


def children_cpu() -> float:
    """User + system CPU seconds of every child waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pure_wheels(index: Path, count: int) -> list[str]:
    """`name==version` of the first `count` projects (by name) whose newest file on the local index is a
    pure-Python wheel under 3 MB."""
    picked: list[str] = []
    for project in sorted(p for p in index.iterdir() if (p / "index.html").is_file()):
        text = (project / "index.html").read_text()
        files = [
            unquote(part.split('"', 1)[0].split("#", 1)[0].rsplit("/", 1)[-1])
            for part in text.split('href="')[1:]
        ]
        wheels = [f for f in files if f.endswith(("-py3-none-any.whl", "-py2.py3-none-any.whl"))]
        if not wheels or project.name in ("pip", "setuptools", "wheel"):
            continue
        target = (index.parent / "files" / wheels[-1]).resolve()
        if target.is_file() and target.stat().st_size > 3_000_000:
            continue
        name, version = wheels[-1].split("-")[:2]
        picked.append(f"{name}=={version}")
        if len(picked) == count:
            break
    return picked


def build(work: Path, size: int, index_url: str, index: Path) -> tuple[Path, Path, Path]:
    """(venv, lock, requirements.txt) for a venv of `size` packages."""
    venv = work / f"venv{size}"
    run([UV, "venv", "--no-config", "-q", "--python", PYTHON, str(venv)])
    pins = pure_wheels(index, size)
    run([UV, "pip", "install", "--no-config", "-q", "--no-deps", "--index-url", index_url,
         "--python", str(venv / "bin" / "python"), *pins])  # fmt: skip
    lock = work / f"lock{size}.yml"
    run([*ENVGUARD, "lock", str(venv), "--no-probe", "-o", str(lock)])
    entries = [e for e in yaml.safe_load(lock.read_text())["package"] if e["manager"] == "pip"]
    missing = [e["name"] for e in entries if not e["hash"].get("sha256")]
    if missing:
        raise SystemExit(f"the lock has no sha256 for {', '.join(missing)}")
    requirements = work / f"requirements{size}.txt"
    requirements.write_text(
        "".join(f"{e['name']}=={e['version']} --hash=sha256:{e['hash']['sha256']}\n" for e in entries)
    )
    return venv, lock, requirements


def compare(
    work: Path,
    size: int,
    index_url: str,
    index: Path,
    rounds: int,
    rng: random.Random,
    baseline: Path | None = None,
) -> None:
    """Build the venv of `size` packages and its lock, time every case interleaved, print the medians; with
    `baseline` (a checkout holding an older envguard/), its sync and verify too."""
    venv, lock, requirements = build(work, size, index_url, index)
    locked = yaml.safe_load(lock.read_text())["package"]
    victim = locked[size // 2]["name"]
    vpy = str(venv / "bin" / "python")
    fresh = work / "fresh"
    stages: dict[str, list[dict[str, float]]] = {"sync": [], "verify": []}

    def short() -> None:
        run([UV, "pip", "uninstall", "--no-config", "-q", "--python", vpy, victim])

    def clear() -> None:
        shutil.rmtree(fresh, ignore_errors=True)

    def verify() -> float:
        seconds, out = timed([*ENVGUARD, "verify", "--lock", str(lock), "--json"])
        stages["verify"].append({s["name"]: s["seconds"] for s in json.loads(out)["stages"]})
        return seconds

    def sync_timings() -> float:
        seconds, out = timed([*sync, "--timings", "--json"])
        stages["sync"].append({t["stage"]: t["seconds"] for t in json.loads(out)["timings"]})
        return seconds

    def uv_sync(python: str) -> list[str]:
        return [UV, "pip", "sync", "--no-config", "-q", "--index-url", index_url, "--python", python,
                str(requirements)]  # fmt: skip

    def uv_rebuild() -> float:
        made = timed([UV, "venv", "--no-config", "-q", "--python", PYTHON, str(fresh)])[0]
        return made + timed(uv_sync(str(fresh / "bin" / "python")))[0]

    sync = [*ENVGUARD, "sync", str(venv), "--lock", str(lock), "--yes"]
    cases: dict[str, tuple[Callable[[], None], Callable[[], float]]] = {
        "repair: envguard sync": (short, lambda: timed(sync)[0]),
        "repair: envguard sync --timings --json": (short, sync_timings),
        "repair: uv pip sync": (short, lambda: timed(uv_sync(vpy))[0]),
        "floor: python -c pass": (lambda: None, lambda: timed([PYTHON, "-c", "pass"])[0]),
        "rebuild: envguard verify": (lambda: None, verify),
        "rebuild: uv venv + uv pip sync": (clear, uv_rebuild),
    }
    if baseline is not None:  # the same commands from the older tree (its own bytecode, the same caches)
        older = {**os.environ, "PYTHONPATH": str(baseline)}
        verify_old = [*ENVGUARD, "verify", "--lock", str(lock), "--json"]
        cases["repair: envguard sync (baseline)"] = (short, lambda: timed(sync, older)[0])
        cases["rebuild: envguard verify (baseline)"] = (lambda: None, lambda: timed(verify_old, older)[0])
    times: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    loads: list[float] = []
    for round_ in range(rounds + 1):
        order = list(cases)
        rng.shuffle(order)
        for name in order:
            setup, measure = cases[name]
            setup()
            before = children_cpu()
            seconds = measure()
            if round_:
                times[name].append(seconds)
                cpu[name].append(children_cpu() - before)
        if round_:
            loads.append(os.getloadavg()[0])
    med = {name: statistics.median(values) for name, values in times.items()}
    load = f"load {min(loads):.1f}-{max(loads):.1f}"
    print(f"\n{size}-package venv ({len(locked)} locked, each with a sha256); {load} over the rounds")
    print(f"  {'case':40s} {'wall ms':>8s} {'(min)':>7s} {'CPU ms':>7s}")
    for name, value in med.items():
        print(f"  {name:40s} {value * 1000:8.0f} {min(times[name]) * 1000:7.0f} "
              f"{statistics.median(cpu[name]) * 1000:7.0f}")  # fmt: skip
    cpu_med = {name: statistics.median(values) for name, values in cpu.items()}

    def ratio(ours: str, theirs: str) -> str:
        wall, used = med[ours] / med[theirs], cpu_med[ours] / cpu_med[theirs]
        return f"wall {wall:5.2f}x, CPU {used:5.2f}x"

    floor = med["floor: python -c pass"] + med["repair: uv pip sync"]
    floor_cpu = cpu_med["floor: python -c pass"] + cpu_med["repair: uv pip sync"]
    print(f"  one-package sync ÷ uv pip sync:    {ratio('repair: envguard sync', 'repair: uv pip sync')}"
          f" (target <= 3x; {load})")  # fmt: skip
    print(f"  floor (python -c pass + uv) ÷ uv:  wall {floor / med['repair: uv pip sync']:5.2f}x, "
          f"CPU {floor_cpu / cpu_med['repair: uv pip sync']:5.2f}x ({floor * 1000:.0f} ms)")  # fmt: skip
    rebuild = ratio("rebuild: envguard verify", "rebuild: uv venv + uv pip sync")
    print(f"  verify ÷ uv venv + uv pip sync:    {rebuild} (target <= 3x; {load})")
    if baseline is not None:
        for what, case in (("sync", "repair: envguard sync"), ("verify", "rebuild: envguard verify")):
            print(f"  this tree ÷ baseline, {what + ':':11s} {ratio(case, f'{case} (baseline)')}")
    shown = {"sync": "repair: envguard sync --timings --json", "verify": "rebuild: envguard verify"}
    for command, measured in stages.items():
        measured = measured[1:]  # the warm-up round's
        by_stage = {k: statistics.median(s[k] for s in measured) for k in measured[0]} if measured else {}
        rest = med[shown[command]] - sum(by_stage.values())
        print(
            f"  envguard {command} by stage (median ms): "
            + ", ".join(f"{k} {v * 1000:.0f}" for k, v in by_stage.items())
            + f"; the rest {rest * 1000:.0f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[15, 150])
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (after one warm-up)")
    parser.add_argument("--index", default="/opt/pypi/simple", help="a local PEP 503 folder")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="also time an older checkout's sync and verify (a folder holding envguard/)",
    )
    args = parser.parse_args(argv)
    index = Path(args.index)
    index_url = index.resolve().as_uri()
    work = Path(tempfile.mkdtemp(prefix="envguard-bench-peers-"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the warm-up round compiles envguard, as pip would have
    os.environ.update(
        HOME=str(work / "home"),
        XDG_CACHE_HOME=str(work / "home" / ".cache"),
        ENVGUARD_CACHE_DIR=str(work / "home" / ".cache" / "envguard"),
        PIP_CONFIG_FILE=str(work / "pip.conf"),  # the one index both tools use: the local mirror
    )
    (work / "pip.conf").write_text(f"[global]\nindex-url = {index_url}\n")
    for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "VIRTUAL_ENV", "CONDA_PREFIX"):
        os.environ.pop(var, None)
    rng = random.Random(44)  # the same shuffles every run
    print(f"uv: {run([UV, '--version']).stdout.strip()}; rounds: {args.rounds} (+1 warm-up); load: "
          f"{os.getloadavg()[0]:.2f}")  # fmt: skip
    for size in args.sizes:
        compare(work, size, index_url, index, args.rounds, rng, args.baseline)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
