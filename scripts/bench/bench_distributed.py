"""The distributed check at 2..64 ranks on this machine (gloo): consensus time after initialisation, before
and after, with a floor, and what crosses the wire.

    python scripts/bench/bench_distributed.py [--ranks 2,8,16,32,64] [--rounds 11] [--packages 300]
                                              [--base 8acb6fd] [--work DIR]

Every rank is a real process started with Slurm's variables alone (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
SLURM_JOB_NODELIST=localhost; no torchrun), meets at rank 0's store, measures a real prefix built by
synth_prefix.py (N conda records shaped like conda's, no payload; the last rank reads a copy with 3 versions
bumped, so one environment differs and the targeted gather runs), and initialises the gloo process group
(timed: init). Then, interleaved round-robin with a barrier before each and the slowest rank's time kept
(an all-reduce MAX), it times:
- floor: one all_gather of a 32-byte digest per rank (the least a consensus can cost);
- alike: `exchange.consensus` and `verdicts.analyze` when every rank has the same environment (the
  summaries all-gathered; no package list crosses);
- after: the same with the last rank's environment differing (its package list and the majority's
  reference rank's cross to rank 0: the targeted gather);
- before: the exchange of --base (`all_gather_object` of every rank's whole report: package list,
  fingerprints, shard indices) and its `analyze`, run from that commit's own modules (`git show`).
Reports medians (and min/max) per rank count, the ratios, the bytes each rank sends (after: the summary, plus
a package list for the ranks asked; before: the pickled report, padded to the longest) and receives, the
machine's load before and after. 2 CPU cores shared by 64 processes: the absolute times at 32 and 64 ranks are
the scheduler's as much as the network's; the ratios and the bytes are the point.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth_prefix

REPO = Path(__file__).resolve().parents[2]
BASE_COMMIT = "8acb6fd"  # r25-core: torchrun only, every rank's whole report all-gathered
OLD_MODULES = ("records", "verdicts", "result", "measure")
PROTOCOLS = ("floor", "alike", "after", "before")


def old_package(work: Path, base: str) -> Path:
    """--base's distributed modules as an importable package `old_distributed` under WORK."""
    target = work / "old_distributed"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    (target / "__init__.py").write_text("")
    for name in OLD_MODULES:
        text = subprocess.run(
            ["git", "show", f"{base}:envguard/distributed/{name}.py"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (target / f"{name}.py").write_text(text.replace("envguard.distributed.", "old_distributed."))
    return work


def worker(args: argparse.Namespace) -> int:
    """One rank: meet, measure (both ways), init gloo, then time the three protocols round-robin."""
    sys.path.insert(0, str(args.work))
    import torch
    import torch.distributed as dist
    from old_distributed import measure as old_measure
    from old_distributed import records as old_records
    from old_distributed import verdicts as old_verdicts

    from envguard.distributed.exchange import consensus
    from envguard.distributed.launcher import detect
    from envguard.distributed.measure import rank_report
    from envguard.distributed.records import encode, to_wire
    from envguard.distributed.rendezvous import MEASURED, connect, process_group
    from envguard.distributed.verdicts import analyze

    launch = detect(os.environ)
    rank, world = launch.rank, launch.world_size
    prefix = str(args.work / ("odd" if rank == world - 1 and world > 1 else "env"))
    meeting = connect(launch, 600.0)
    new = rank_report(prefix, rank, world, seed=0, epochs=2, probe=False, loader=True)
    same = rank_report(str(args.work / "env"), rank, world, seed=0, epochs=2, probe=False, loader=True)
    old = old_measure.rank_report(
        prefix, rank, world, data_dir=None, seed=0, epochs=2, probe=False, loader=True
    )
    meeting.mark(MEASURED)
    meeting.wait(MEASURED)
    started = time.perf_counter()
    with process_group(meeting):
        init_s = time.perf_counter() - started

        def slowest(value: float) -> float:
            tensor = torch.tensor([value], dtype=torch.float64)
            dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
            return float(tensor.item())

        def floor() -> None:
            out = [torch.zeros(32, dtype=torch.uint8) for _ in range(world)]
            dist.all_gather(out, torch.zeros(32, dtype=torch.uint8))

        def after() -> None:
            exchanged = consensus(new, rank, world)
            analyze(exchanged.reports, rank, details=exchanged.details)

        def alike() -> None:
            exchanged = consensus(same, rank, world)
            analyze(exchanged.reports, rank, details=exchanged.details)

        def before() -> None:
            gathered: list[Any] = [None] * world
            dist.all_gather_object(gathered, old_records.to_wire(old))
            old_verdicts.analyze([old_records.from_wire(r) for r in gathered], rank)

        steps: dict[str, Callable[[], None]] = {
            "floor": floor,
            "alike": alike,
            "after": after,
            "before": before,
        }
        times: dict[str, list[float]] = {name: [] for name in PROTOCOLS}
        after()  # warm both paths once (first collectives set up gloo's pairs)
        before()
        for round_ in range(args.rounds):
            for name in PROTOCOLS[round_ % 4 :] + PROTOCOLS[: round_ % 4]:
                dist.barrier()
                began = time.perf_counter()
                steps[name]()
                times[name].append(slowest(time.perf_counter() - began))
        init_max = slowest(init_s)
        exchanged = consensus(new, rank, world)
        sent = torch.tensor([exchanged.detail_bytes if rank != 0 else 0], dtype=torch.int64)
        dist.all_reduce(sent, op=dist.ReduceOp.MAX)
        old_slot = torch.tensor([len(pickle.dumps(old_records.to_wire(old)))], dtype=torch.int64)
        dist.all_reduce(old_slot, op=dist.ReduceOp.MAX)
    meeting.finish()
    if rank == 0:
        print(
            json.dumps(
                {
                    "world": world,
                    "init_s": init_max,
                    "times": times,
                    "summary_bytes": exchanged.summary_bytes,
                    "package_list_bytes": int(sent.item()),
                    "detail_ranks": list(exchanged.detail_ranks),
                    "before_slot_bytes": int(old_slot.item()),
                    "summary_example": len(encode(to_wire(new.report))),
                }
            )
        )
    return 0


def judge(args: argparse.Namespace, world: int, repeats: int = 3) -> dict[str, Any]:
    """The judging alone at a fleet's size, in this one process (no network): every rank's summary parsed and
    judged (after) against every rank's whole report unpickled and judged (before), as rank 0 does once the
    all-gather is in. Ranks are copies of one real measured rank (renumbered, 8 to a host), the last one with
    the odd environment."""
    import dataclasses

    sys.path.insert(0, str(args.work))
    from old_distributed import measure as old_measure
    from old_distributed import records as old_records
    from old_distributed import verdicts as old_verdicts

    from envguard.distributed.measure import rank_report, slice_of
    from envguard.distributed.records import detail_from_wire, encode, from_wire, to_wire
    from envguard.distributed.verdicts import analyze

    env, odd = str(args.work / "env"), str(args.work / "odd")
    same, other = (rank_report(p, 0, world, seed=0, epochs=2, probe=False, loader=False) for p in (env, odd))
    blobs = [
        encode(
            to_wire(
                dataclasses.replace((other if r == world - 1 else same).report, rank=r, host=f"n{r // 8}")
            )
        )
        for r in range(world)
    ]
    details = {
        0: detail_from_wire(json.loads(same.detail)),
        world - 1: detail_from_wire(json.loads(other.detail)),
    }
    old_same, old_other = (
        old_records.to_wire(
            old_measure.rank_report(p, 0, world, data_dir=None, seed=0, epochs=2, probe=False, loader=False)
        )
        for p in (env, odd)
    )
    orders = [
        old_measure.shard_report(1001, 0, 1, seed=0, epochs=2, loader=False)[e].indices for e in range(2)
    ]
    old_blobs = [
        pickle.dumps(
            {
                **(old_other if r == world - 1 else old_same),
                "rank": r,
                "host": f"n{r // 8}",
                "shards": [
                    {"epoch": e, "indices": list(slice_of(orders[e], r, world)), "sha256": "0" * 64}
                    for e in range(2)
                ],
            }
        )
        for r in range(world)
    ]
    after, before = [], []
    for _ in range(repeats):
        began = time.perf_counter()
        analyze([from_wire(json.loads(blob)) for blob in blobs], 0, details=details)
        after.append(time.perf_counter() - began)
        began = time.perf_counter()
        old_verdicts.analyze([old_records.from_wire(pickle.loads(blob)) for blob in old_blobs], 0)
        before.append(time.perf_counter() - began)
    return {
        "world": world,
        "after_s": min(after),
        "before_s": min(before),
        "after_bytes": sum(len(b) for b in blobs),
        "before_bytes": sum(len(b) for b in old_blobs),
    }


def run_ranks(world: int, args: argparse.Namespace, job: int) -> dict[str, Any]:
    """Start WORLD ranks with Slurm's variables and return rank 0's figures."""
    launchers = ("SLURM_", "OMPI_", "PMI_", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_", "TORCHELASTIC_")
    base = {k: v for k, v in os.environ.items() if not k.startswith(launchers)}
    base.update(
        {
            "SLURM_NTASKS": str(world),
            "SLURM_JOB_ID": str(job),
            "SLURM_JOB_NODELIST": "localhost",
            "ENVGUARD_CACHE_DIR": str(args.work / "cache"),
            "TORCH_CPP_LOG_LEVEL": "FATAL",
            "OMP_NUM_THREADS": "1",
            "TORCH_GLOO_LAZY_INIT": "1" if args.lazy_init else "0",
        }
    )
    command = [sys.executable, __file__, "--worker", "--work", str(args.work), "--rounds", str(args.rounds)]
    ranks = [
        subprocess.Popen(
            command,
            env={**base, "SLURM_PROCID": str(rank), "SLURM_LOCALID": str(rank)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(world)
    ]
    outputs = [rank.communicate(timeout=1800) for rank in ranks]
    pairs = enumerate(zip(ranks, outputs, strict=True))
    failed = [(i, err[-800:]) for i, (rank, (_out, err)) in pairs if rank.returncode]
    if failed:
        raise SystemExit(f"{world} ranks: rank {failed[0][0]} failed: {failed[0][1]}")
    figures: dict[str, Any] = json.loads(outputs[0][0].strip().splitlines()[-1])
    return figures


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:8.2f} ({min(values) * 1000:.2f}-{max(values) * 1000:.2f})"


def report(results: list[dict[str, Any]]) -> str:
    lines = [
        "| ranks | init (gloo) ms | floor ms | alike ms | one differs ms | before ms | before/after "
        "| after/floor |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        med = {name: statistics.median(r["times"][name]) for name in PROTOCOLS}
        lines.append(
            f"| {r['world']} | {r['init_s'] * 1000:.0f} | {ms(r['times']['floor'])} | "
            f"{ms(r['times']['alike'])} | {ms(r['times']['after'])} | {ms(r['times']['before'])} | "
            f"{med['before'] / med['after']:.2f} | "
            f"{med['after'] / med['floor']:.1f} |"
        )
    lines += [
        "",
        "| ranks | after: summary slot B/rank | after: package lists to rank 0 B (from ranks) "
        "| before: slot B/rank | after: received B/rank | before: received B/rank |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        world = r["world"]
        lines.append(
            f"| {world} | {r['summary_bytes']} | {r['package_list_bytes']} ({r['detail_ranks']}) | "
            f"{r['before_slot_bytes']} | {world * r['summary_bytes']} | "
            f"{world * r['before_slot_bytes']} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ranks", default="2,8,16,32,64")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--packages", type=int, default=300)
    parser.add_argument("--base", default=BASE_COMMIT)
    parser.add_argument("--work", type=Path)
    parser.add_argument(
        "--judge", default="", help="also time the judging alone at these rank counts (e.g. 1000,8000)"
    )
    parser.add_argument(
        "--lazy-init", action="store_true", help="TORCH_GLOO_LAZY_INIT=1: gloo connects a pair on first use"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    args.work = (args.work or Path(tempfile.mkdtemp(prefix="bench_distributed_"))).resolve()
    env = synth_prefix.build(args.work / "env", args.packages, 50, payload=False)
    synth_prefix.variant(env, args.work / "odd", bump=3)
    old_package(args.work, args.base)
    print(f"{os.cpu_count()} CPUs, load before: {os.getloadavg()[0]:.2f}; work {args.work}", flush=True)
    results = []
    for number, world in enumerate(int(n) for n in args.ranks.split(",") if n):
        began = time.monotonic()
        results.append(run_ranks(world, args, 70_000 + os.getpid() % 1000 + number))
        print(f"{world} ranks: {time.monotonic() - began:.0f} s wall in all", flush=True)
    if results:
        print(report(results))
    judged = [judge(args, int(n)) for n in args.judge.split(",") if n]
    if judged:
        print(
            "\n| ranks | after: parse + judge ms | before: unpickle + judge ms | before/after "
            "| after: bytes in | before: bytes in |\n|---:|---:|---:|---:|---:|---:|"
        )
        for j in judged:
            print(
                f"| {j['world']} | {j['after_s'] * 1000:.0f} | {j['before_s'] * 1000:.0f} | "
                f"{j['before_s'] / j['after_s']:.1f} | {j['after_bytes']} | {j['before_bytes']} |"
            )
    print(f"\nload after: {os.getloadavg()[0]:.2f}")
    (args.work / "results.json").write_text(json.dumps({"ranks": results, "judge": judged}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
