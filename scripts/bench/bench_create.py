"""Benchmark: `envguard create` and `envguard verify` of a ~300-package environment from a local channel, side
by side with calling py-rattler's solve + install directly, in one run. Prints medians, ratios and a Markdown
table.

    python scripts/bench/bench_create.py                # 300 bulk packages, 7 rounds
    python scripts/bench/bench_create.py --bulk 300 --rounds 11

Three floors: the bare engine (solve + install) into the same path every round (as create does) and into a
fresh temporary folder (as verify's rebuild does), and its install alone of records solved beforehand into a
fresh folder (the engine's share of a verify, which solves nothing); after the table, where verify's time goes
(its stages, from its own --json report) beside that floor and the 1.2x budget. Each round runs every case
once, in an order shuffled from round to round (seeded; no case always follows the same one). Everything runs
in this process with warm package caches (the first round of each is a discarded warm-up; `--cold` empties
both engines' package caches before every round instead, as on a fresh CI runner),
so the numbers compare the work envguard adds (machine check, naming, archive hashing, conda-style history,
registration, the lock beside environment.yml, reading and checking the rebuilt prefix) with the bare engine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import fixture_channel  # noqa: E402


def rattler_direct(channel: str, specs: list[str], prefix: Path, cache: Path) -> None:
    """The baseline: rattler.solve + rattler.install, nothing else."""
    rattler_install(rattler_solve(channel, specs), prefix, cache)


def rattler_solve(channel: str, specs: list[str]) -> list[object]:
    """rattler.solve of the specs for linux-64 with this machine's default virtual packages."""
    import rattler

    from envguard.machine.platform import default_virtual_packages

    virtual = [
        rattler.GenericVirtualPackage(
            rattler.PackageName(v.name), rattler.Version(v.version), rattler.BuildString(v.build)
        )
        for v in default_virtual_packages("linux-64", None)
    ]

    async def go() -> list[object]:
        records: list[object] = await rattler.solve(
            [rattler.Channel(channel)],
            [rattler.MatchSpec(s) for s in specs],
            platforms=[rattler.Subdir("linux-64"), rattler.Subdir("noarch")],
            virtual_packages=virtual,
        )
        return records

    return asyncio.run(go())


def rattler_install(records: list[object], prefix: Path, cache: Path) -> None:
    """rattler.install of solved records, nothing else."""
    import rattler

    asyncio.run(rattler.install(records, prefix, cache_dir=cache, show_progress=False))


def envguard(*argv: str) -> str:
    """Run the envguard CLI in this process; its stdout."""
    from envguard.cli.app import run

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = run(list(argv))
    if code != 0:
        raise SystemExit(f"envguard {' '.join(argv)} exited {code}")
    return out.getvalue()


def timed(action: Callable[[], None], reset: Callable[[], None]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process, all threads): CPU time shows the work done even when other
    jobs share the machine and make wall time noisy."""
    reset()
    os.sync()  # the previous case's deletes and writes are flushed, not billed to this one
    start, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - start, time.process_time() - cpu


class Graveyard:
    """Where the benchmark puts what it would otherwise delete between cases: a folder is renamed into it
    (one metadata operation) and everything is deleted when the run ends. On this VM's disk (ext4 mounted with
    `discard`) a prefix installed right after a 302-package prefix was deleted links ~1.4x slower than one
    installed after a rename, however long it waits, so deleting between cases would bill one case's cleanup
    to whichever case comes next."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def bury(self, path: Path) -> None:
        if path.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            self.count += 1
            os.rename(path, self.folder / str(self.count))


def drop_kept(graveyard: Graveyard | None = None) -> float:
    """Wait for verify's background deleter to finish (it renames the temporary prefix into a trash folder and
    a detached rm empties it), then remove the prefixes `verify --keep` left (into GRAVEYARD, else deleted);
    outside the timing, so the next case does not share the machine with a deletion. Returns the seconds
    waited for the deleter."""
    start = time.perf_counter()
    trash = Path(tempfile.gettempdir()) / "envguard-verify-trash"
    while trash.exists() and time.perf_counter() - start < 60:
        time.sleep(0.005)
    waited = time.perf_counter() - start
    for folder in Path(tempfile.gettempdir()).glob("envguard-verify-*"):
        if graveyard is not None:
            graveyard.bury(folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return waited


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bulk", type=int, default=300, help="extra packages in the environment")
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds (after one warm-up)")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="empty the package caches before every round (a fresh machine or CI runner: every "
        "archive is extracted), instead of warm caches",
    )
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="envguard-bench-create-"))
    os.environ.update(
        HOME=str(work / "home"),
        XDG_CACHE_HOME=str(work / "home" / ".cache"),
        ENVGUARD_CACHE_DIR=str(work / "home" / ".cache" / "envguard"),
    )
    for var in ("CONDA_ENVS_PATH", "CONDA_OVERRIDE_CUDA", "ENVGUARD_BACKEND"):
        os.environ.pop(var, None)
    (work / "tmp").mkdir()
    tempfile.tempdir = str(work / "tmp")  # verify's temporary prefixes stay inside the benchmark's folder
    try:
        return run(work, args.bulk, args.rounds, args.cold)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, bulk: int, rounds: int, cold: bool = False) -> int:
    channels = fixture_channel.build_channels(work / "channels", bulk=bulk)
    channel = channels["forge"].resolve().as_uri()
    specs = ["python=3.11", *[r.name for r in fixture_channel.bulk_recipes(bulk)]]
    project = work / "project"
    project.mkdir()
    yml = project / "environment.yml"
    yml.write_text("channels:\n  - " + channel + "\ndependencies:\n" + "".join(f"  - {s}\n" for s in specs))
    rattler_cache = work / "rattler-pkgs"
    target = work / "env"

    graveyard = Graveyard(work / "graveyard")  # emptied with `work` when the run ends

    def reset() -> None:
        graveyard.bury(target)
        (work / "home" / ".conda" / "environments.txt").unlink(missing_ok=True)
        if cold:  # both engines start from empty package caches (envguard's is ENVGUARD_PKGS_DIR's default)
            graveyard.bury(rattler_cache)
            graveyard.bury(work / "home" / ".cache" / "envguard" / "pkgs")

    lock = str(project / "conda-lock.yml")
    create = ["create", "-f", str(yml), "--prefix", str(target), "--backend", "embedded"]

    def rattler_fresh() -> None:
        # what verify does: a new temporary folder each time (drop_kept moves it aside, outside the timing)
        folder = Path(tempfile.mkdtemp(prefix="envguard-verify-bare-"))
        rattler_direct(channel, specs, folder / "env", rattler_cache)

    solved = rattler_solve(channel, specs)  # once, outside the timing: the engine's share of a verify

    def rattler_install_only() -> None:
        folder = Path(tempfile.mkdtemp(prefix="envguard-verify-bare-"))
        rattler_install(solved, folder / "env", rattler_cache)

    reports: list[dict[str, Any]] = []  # verify --keep --json's report of each round: its stages' times

    def verify_keep() -> None:
        reports.append(json.loads(envguard("verify", "--lock", lock, "--keep", "--json")))

    cases: dict[str, Callable[[], None]] = {
        "rattler solve + install (direct)": lambda: rattler_direct(channel, specs, target, rattler_cache),
        "rattler solve + install into a fresh temporary folder": rattler_fresh,
        "envguard create -f environment.yml": lambda: envguard(*create),
        "envguard create --no-lock": lambda: envguard(*create, "--no-lock"),
        "envguard verify (rebuild, hashes, check; deletion detached)": lambda: envguard(
            "verify", "--lock", lock
        ),
        "envguard verify --keep --json (no cleanup)": verify_keep,
        "rattler install only (solved beforehand), fresh temporary folder": rattler_install_only,
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    deleting: list[float] = []  # how long verify's detached deleter ran on after verify returned
    order = list(cases.items())
    shuffle = random.Random(12).shuffle  # seeded: two runs take the same orders
    for round_number in range(rounds + 1):
        # interleaved, so drift in machine load hits every case alike, and shuffled, so no case always follows
        # the same one (a case after a large deletion or a verify links on a busier disk). A rotation would
        # not do: it keeps the cyclic order, so each case would follow the same one in almost every round.
        if round_number:  # the warm-up round keeps the listed order: create writes the lock verify reads
            shuffle(order)
        for name, action in order:
            seconds = timed(action, reset)
            waited = drop_kept(graveyard)
            if round_number:
                samples[name].append(seconds)
                if "deletion detached" in name:
                    deleting.append(waited)
    print(table(samples, bulk, rounds, cold))
    fresh = samples["rattler solve + install into a fresh temporary folder"]
    for name in (
        "envguard verify (rebuild, hashes, check; deletion detached)",
        "envguard verify --keep --json (no cleanup)",
    ):
        wall = statistics.median(w for w, _c in samples[name]) / statistics.median(w for w, _c in fresh)
        paired = statistics.median(w / b for (w, _c), (b, _d) in zip(samples[name], fresh, strict=True))
        print(
            f"{name}: {wall:.2f}x of the bare engine into a fresh temporary folder ({paired:.2f}x per round)"
        )
    print(where_verify_goes(samples, reports[1:]))  # the first report is the warm-up round's
    print(
        "\nverify's detached deletion of the temporary prefix finished a median "
        f"{statistics.median(deleting):.3f} s after verify returned (not in the figures above: it is off the "
        "caller's clock)"
    )
    return 0


def where_verify_goes(samples: dict[str, list[tuple[float, float]]], reports: list[dict[str, Any]]) -> str:
    """verify --keep's stages from its own reports, beside the bare engine's install alone and the 1.2x budget
    (issue 12): how much of verify is the engine, how much each of its checks. Per-round differences, then
    medians."""
    kept = [w for w, _c in samples["envguard verify --keep --json (no cleanup)"]]
    alone = [w for w, _c in samples["rattler install only (solved beforehand), fresh temporary folder"]]
    fresh = [w for w, _c in samples["rattler solve + install into a fresh temporary folder"]]
    stages: dict[str, list[float]] = {}
    for report in reports:
        for stage in report["stages"]:
            stages.setdefault(stage["name"], []).append(stage["seconds"])
    median = statistics.median
    outside = median(k - sum(s["seconds"] for s in r["stages"]) for k, r in zip(kept, reports, strict=True))
    over = median(i - a for i, a in zip(stages["install"], alone, strict=True))
    budget = median(1.2 * f - a for f, a in zip(fresh, alone, strict=True))
    added = median(k - a for k, a in zip(kept, alone, strict=True))
    parts = ", ".join(f"{name} {median(values):.3f} s" for name, values in stages.items())
    return (
        f"\nWhere verify --keep's time goes (stages from its --json report): {parts}; outside its stages "
        f"(reading the lock, the temporary folder, the report) {outside:.3f} s.\n"
        f"The bare engine's install alone (solved beforehand, fresh folder) takes {median(alone):.3f} s; "
        f"verify's install stage takes {over:.3f} s more (the package-cache proof, the install records from "
        "the index memo, the lock's URLs put back).\n"
        f"1.2x the bare solve + install into a fresh folder leaves {budget:.3f} s beyond the install alone "
        f"for everything verify adds; it adds {added:.3f} s (medians of per-round differences)."
    )


def table(samples: dict[str, list[tuple[float, float]]], bulk: int, rounds: int, cold: bool = False) -> str:
    base_name = next(iter(samples))
    base_wall = statistics.median(w for w, _c in samples[base_name])
    base_cpu = statistics.median(c for _w, c in samples[base_name])
    lines = [
        f"Create/verify of a {bulk + 2}-package environment from a local file:// channel "
        f"(median of {rounds} rounds, {'empty' if cold else 'warm'} package caches, in one process; "
        f"python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs)",
        "",
        "| Operation | Wall median (s) | Wall ratio | Wall ratio, per round | CPU median (s) | CPU ratio "
        "| CPU overhead |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, values in samples.items():
        wall = statistics.median(w for w, _c in values)
        cpu = statistics.median(c for _w, c in values)
        # each round's ratio to the bare engine's run in the same round (drift in the machine cancels out)
        paired = statistics.median(w / b for (w, _c), (b, _d) in zip(values, samples[base_name], strict=True))
        overhead = "—" if name == base_name else f"{(cpu / base_cpu - 1) * 100:+.1f}%"
        lines.append(
            f"| {name} | {wall:.3f} | {wall / base_wall:.2f}x | {paired:.2f}x | {cpu:.3f} | "
            f"{cpu / base_cpu:.2f}x | {overhead} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
