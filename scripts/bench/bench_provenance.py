"""Benchmark issue 30's commands side by side with the command each extends, in one run.

    python scripts/bench/bench_provenance.py [--runs 9] [--verify-runs 3] [--packages 300] [--work DIR]

Builds the 300-package prefix of bench_snapshot.py, locks it, makes an ed25519 key with openssl and one
attestation, then times, interleaved round-robin, each as a fresh subprocess (CPU time of the child):
`check --attestation --key` against the full `check --no-cache` of the same lock; `export --format cyclonedx`
against `--format explicit`; `lock --format pixi --pixi-version 7` (rattler's writer) against version 6
(envguard's); `lock -f environment.yml --exclude-newer` against the same solve without it. Then, fewer
rounds (wall time: the rebuild is I/O), `verify --attest --key` against `verify`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_snapshot import bench_env, build_prefix, fixture_channel, measure

PAIRS = (
    ("check --no-cache (full)", "check --attestation --key"),
    ("export --format explicit", "export --format cyclonedx"),
    ("lock --format pixi (v6)", "lock --format pixi --pixi-version 7"),
    ("lock -f environment.yml", "lock -f environment.yml --exclude-newer"),
    ("verify", "verify --attest --key"),
)


def setup(work: Path, packages: int, env: dict[str, str], envguard: str) -> dict[str, Path]:
    """The prefix, its lock, an environment.yml of the same packages, a key pair and an attestation."""
    prefix = build_prefix(work, packages)
    lock = work / "conda-lock.yml"
    subprocess.run([envguard, "lock", str(prefix), "--no-probe", "-o", str(lock)], check=True, env=env)
    specs = ["python=3.11", "numpy=1.26", "pip"] + [r.name for r in fixture_channel.bulk_recipes(packages)]
    forge = (work / "channels" / "forge").resolve().as_uri()
    yml = work / "environment.yml"
    yml.write_text(f"channels:\n  - {forge}\ndependencies:\n" + "".join(f"  - {s}\n" for s in specs))
    key, pub = work / "key.pem", work / "key.pub"
    if not key.exists():
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
        subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)], check=True)
    attestation = work / "env.intoto.json"
    argv = [envguard, "verify", "--lock", str(lock), "--attest", str(attestation), "--key", str(key)]
    subprocess.run(argv, check=True, env=env, capture_output=True)
    return {"prefix": prefix, "lock": lock, "yml": yml, "key": key, "pub": pub, "attestation": attestation}


def commands(envguard: str, files: dict[str, Path], out: Path) -> dict[str, list[str]]:
    prefix, lock = str(files["prefix"]), str(files["lock"])
    solve = [envguard, "lock", "-f", str(files["yml"]), "--no-cuda", "-o"]
    attestation, pub = str(files["attestation"]), str(files["pub"])
    return {
        "check --no-cache (full)": [envguard, "check", prefix, "--lock", lock, "--no-cache"],
        "check --attestation --key": [
            envguard,
            "check",
            prefix,
            "--lock",
            lock,
            "--attestation",
            attestation,
            "--key",
            pub,
        ],
        "export --format explicit": [
            envguard,
            "export",
            prefix,
            "--format",
            "explicit",
            "-o",
            str(out / "e.txt"),
        ],
        "export --format cyclonedx": [
            envguard,
            "export",
            prefix,
            "--format",
            "cyclonedx",
            "-o",
            str(out / "s.json"),
        ],
        "lock --format pixi (v6)": [
            envguard,
            "lock",
            prefix,
            "--no-probe",
            "--format",
            "pixi",
            "-o",
            str(out / "6.lock"),
        ],
        "lock --format pixi --pixi-version 7": [
            *[envguard, "lock", prefix, "--no-probe", "--format", "pixi", "--pixi-version", "7"],
            *["-o", str(out / "7.lock")],
        ],
        "lock -f environment.yml": [*solve, str(out / "a.yml")],
        "lock -f environment.yml --exclude-newer": [
            *solve[:-1],
            "--exclude-newer",
            "2030-01-01",
            "-o",
            str(out / "b.yml"),
        ],
    }


def verify_commands(envguard: str, files: dict[str, Path], out: Path) -> dict[str, list[str]]:
    verify = [envguard, "verify", "--lock", str(files["lock"])]
    return {
        "verify": verify,
        "verify --attest --key": [*verify, "--attest", str(out / "v.json"), "--key", str(files["key"])],
    }


def report(times: dict[str, list[float]], packages: int, runs: dict[str, int]) -> str:
    med = {name: statistics.median(values) for name, values in times.items()}
    rows = [
        f"Prefix: {packages} conda packages; interleaved rounds ({runs['cpu']} for the CPU rows, "
        f"{runs['wall']} for verify); Python {sys.version.split()[0]}, {os.cpu_count()} CPUs.",
        "",
        "| base command | median (ms) | issue 30's command | median (ms) | ratio |",
        "|---|---:|---|---:|---:|",
    ]
    for base, new in PAIRS:
        ratio = med[new] / med[base]
        rows.append(f"| `{base}` | {med[base] * 1000:.0f} | `{new}` | {med[new] * 1000:.0f} | {ratio:.2f}x |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--verify-runs", type=int, default=3)
    parser.add_argument("--packages", type=int, default=300, help="extra packages besides python/numpy/pip")
    parser.add_argument("--work", type=Path, help="reuse this folder (default: a temp folder, removed)")
    args = parser.parse_args(argv)
    bindir = Path(sys.executable).parent
    envguard = shutil.which("envguard", path=str(bindir)) or str(bindir / "envguard")
    work = args.work or Path(tempfile.mkdtemp(prefix="envguard-bench-provenance-"))
    try:
        work.mkdir(parents=True, exist_ok=True)
        env = bench_env(work / "cache")
        files = setup(work, args.packages, env, envguard)
        out = work / "out"
        out.mkdir(exist_ok=True)
        times = measure(commands(envguard, files, out), args.runs, env, clock="cpu")
        times.update(measure(verify_commands(envguard, files, out), args.verify_runs, env, clock="wall"))
        installed = len(list((files["prefix"] / "conda-meta").glob("*.json")))
        print(report(times, installed, {"cpu": args.runs, "wall": args.verify_runs}))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
