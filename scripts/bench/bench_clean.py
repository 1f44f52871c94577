"""Benchmark `envguard clean`'s scan on a synthetic cache of 5,000 extracted packages used by 20 environments.

The layout has real shapes: each package is `NAME-VER-BUILD/` with info/index.json, info/paths.json and a few
payload files, a rattler `.lock` beside it, tarballs for every fifth; each environment hardlinks the payload
of ~250 packages and holds a conda-meta record for each (extracted_package_dir, fn, url, link, files,
paths_data). About 1,000 packages are used by no environment, so the scan also measures (walks) those.

Timed side by side, warm page cache, median of --runs:
- os.walk over the cache and the environments' conda-meta folders (names only): the floor
- the same walk with an lstat of every entry (what any size-accounting tool must at least do)
- `du -s` over the cache (a real tool doing the same walk in C)
- envguard's scan in-process: discovery, usage, scan, classify, measure, account (the dry run without
  rendering)
- `envguard clean --json` as a new process (interpreter start, imports and JSON rendering included)

Usage: python scripts/bench/bench_clean.py [--packages 5000] [--envs 20] [--per-env 250] [--runs 5] [--dir
DIR] Prints a Markdown table. Target: the in-process scan under 2 s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

FILES_PER_PACKAGE = 3


def dist_of(i: int) -> tuple[str, str, str]:
    return f"bench-pkg{i:05d}", f"1.{i % 10}.{i % 7}", f"h{i * 2654435761 % 16**8:08x}_{i % 3}"


def build_cache(cache: Path, packages: int) -> None:
    cache.mkdir(parents=True)
    (cache / ".cache.lock").touch()
    (cache / "urls.txt").write_text("")
    for i in range(packages):
        name, version, build = dist_of(i)
        folder = cache / f"{name}-{version}-{build}"
        (folder / "info").mkdir(parents=True)
        (folder / "lib").mkdir()
        paths = []
        for j in range(FILES_PER_PACKAGE):
            data = f"{name} {j}\n".encode() * (8 + j * 40)
            (folder / "lib" / f"{name}-{j}.txt").write_bytes(data)
            paths.append(
                {
                    "_path": f"lib/{name}-{j}.txt",
                    "path_type": "hardlink",
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "size_in_bytes": len(data),
                }
            )
        index = {
            "name": name,
            "version": version,
            "build": build,
            "build_number": i % 3,
            "subdir": "linux-64",
            "depends": [f"bench-pkg{(i + 1) % packages:05d}"],
            "license": "BSD-3-Clause",
        }
        (folder / "info" / "index.json").write_text(json.dumps(index))
        (folder / "info" / "paths.json").write_text(json.dumps({"paths_version": 1, "paths": paths}))
        (cache / f"{folder.name}.lock").write_bytes(bytes(40))
        if i % 5 == 0:
            (cache / f"{folder.name}.conda").write_bytes(b"PK" + bytes(600))


def build_env(prefix: Path, cache: Path, picks: list[int]) -> None:
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "lib").mkdir()
    for i in picks:
        name, version, build = dist_of(i)
        dist = f"{name}-{version}-{build}"
        source = cache / dist
        paths = json.loads((source / "info" / "paths.json").read_text())["paths"]
        for entry in paths:
            os.link(source / entry["_path"], prefix / entry["_path"])
        record = {
            "name": name,
            "version": version,
            "build": build,
            "build_number": i % 3,
            "channel": "https://conda.anaconda.org/conda-forge/linux-64",
            "subdir": "linux-64",
            "fn": f"{dist}.conda",
            "url": f"https://conda.anaconda.org/conda-forge/linux-64/{dist}.conda",
            "md5": hashlib.md5(dist.encode()).hexdigest(),
            "sha256": hashlib.sha256(dist.encode()).hexdigest(),
            "depends": [],
            "constrains": [],
            "license": "BSD-3-Clause",
            "timestamp": 1700000000000,
            "size": 600,
            "extracted_package_dir": str(source),
            "files": [p["_path"] for p in paths],
            "paths_data": {"paths_version": 1, "paths": paths},
            "link": {"source": str(source), "type": 1},
            "requested_spec": "None",
        }
        (prefix / "conda-meta" / f"{dist}.json").write_text(json.dumps(record, indent=2))


def build(root: Path, packages: int, envs: int, per_env: int) -> tuple[Path, list[Path]]:
    """The synthetic layout: 80% of the packages are the pool environments draw from."""
    cache = root / "pkgs"
    build_cache(cache, packages)
    rng = random.Random(1234)
    pool = list(range(int(packages * 0.8)))
    prefixes = []
    for e in range(envs):
        prefix = root / "envs" / f"env{e:02d}"
        build_env(prefix, cache, sorted(rng.sample(pool, min(per_env, len(pool)))))
        prefixes.append(prefix)
    return cache, prefixes


def walk_names(folders: list[Path]) -> int:
    count = 0
    for folder in folders:
        for _dirpath, dirnames, filenames in os.walk(folder):
            count += len(dirnames) + len(filenames)
    return count


def walk_lstat(folders: list[Path]) -> int:
    total = 0
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            for name in dirnames + filenames:
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def envguard_scan(cache: Path, envs: list[Path]) -> tuple[int, int]:
    from envguard.clean.survey import Request, discover, plan_for
    from envguard.clean.usage import analyse

    request = Request(caches=(cache,), envs=tuple(envs), conda_info=False)
    caches, found, notes = discover(request)
    plan = plan_for(caches, analyse(found, ()), notes=notes)
    count, _size, disk = plan.totals()
    return count, disk


def median_time(function: Callable[[], object], runs: int) -> tuple[float, object]:
    times = []
    result: object = None
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--packages", type=int, default=5000)
    parser.add_argument("--envs", type=int, default=20)
    parser.add_argument("--per-env", type=int, default=250)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to build the layout (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="envguard-bench-clean-", dir=args.dir))
    env = {
        **os.environ,
        "HOME": str(root / "home"),
        "CONDA_PKGS_DIRS": "",
        "XDG_CACHE_HOME": str(root / "xdg"),
        "CONDARC": str(root / "home" / ".condarc"),
        "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin",
    }
    os.environ.update({k: v for k, v in env.items() if k != "PATH"})
    try:
        (root / "home").mkdir()
        start = time.perf_counter()
        cache, envs = build(root, args.packages, args.envs, args.per_env)
        built = time.perf_counter() - start
        folders = [cache, *(e / "conda-meta" for e in envs)]
        rows: list[tuple[str, float, str]] = []
        t, n = median_time(lambda: walk_names(folders), args.runs)
        floor = t
        rows.append(
            ("`os.walk` of the cache + environments' conda-meta (names only) — the floor", t, f"{n} entries")
        )
        t, _ = median_time(lambda: walk_lstat(folders), args.runs)
        rows.append(("`os.walk` + `lstat` of every entry", t, ""))
        du = ["du", "-s", str(cache)]
        t, _ = median_time(lambda: subprocess.run(du, check=True, capture_output=True), args.runs)
        rows.append(("`du -s` of the cache (new process)", t, ""))
        t, found = median_time(lambda: envguard_scan(cache, envs), args.runs)
        count, disk = found  # type: ignore[misc]
        rows.append(
            (
                "envguard clean scan, in-process (discover, usage, scan, classify, measure, account)",
                t,
                f"{count} items, {disk / 2**20:.1f} MiB on disk",
            )
        )
        scan_time = t
        cli = [sys.executable, "-m", "envguard", "clean", "--json", "--cache", str(cache)]
        cli += [a for e in envs for a in ("--env", str(e))]
        t, _ = median_time(lambda: subprocess.run(cli, check=True, capture_output=True, env=env), args.runs)
        rows.append(("`envguard clean --json` (new process: start, imports, scan, JSON)", t, ""))
        print(
            f"Layout: {args.packages} extracted packages ({args.packages // 5} tarballs), {args.envs} "
            "environments "
            f"x {args.per_env} records (hardlinked payload); built in {built:.1f} s. Median of {args.runs} "
            "runs, "
            "warm page cache.\n"
        )
        print("| What | Median (s) | vs floor | Notes |")
        print("|---|---:|---:|---|")
        for what, seconds, note in rows:
            print(f"| {what} | {seconds:.3f} | {seconds / floor:.1f}x | {note} |")
        verdict = "meets" if scan_time < 2.0 else "MISSES"
        print(f"\nTarget: scan under 2 s — {verdict} ({scan_time:.2f} s).")
        return 0 if scan_time < 2.0 else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
