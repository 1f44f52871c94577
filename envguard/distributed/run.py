"""The distributed check, one envguard per rank under torchrun, Slurm or MPI: each rank finds its launcher
(`launcher.detect`), meets the others at rank 0's store (`rendezvous`), measures its environment, lock and
DistributedSampler shards, and, once every rank has measured, joins a gloo process group for the exchange of
digests (`exchange.consensus`); every rank judges the same summaries, so all exit alike, and rank 0 prints.

    torchrun --standalone --nproc-per-node=2 -m envguard check --distributed
    srun envguard check --distributed              # inside an sbatch allocation
    mpirun -np 16 envguard smoke --distributed
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.distributed.exchange import consensus
from envguard.distributed.launcher import detect
from envguard.distributed.measure import rank_report
from envguard.distributed.rendezvous import MEASURED, connect, process_group
from envguard.distributed.result import DistributedResult, Wire
from envguard.distributed.verdicts import analyze
from envguard.errors import UsageError
from envguard.machine.memlimit import DataLimit

DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class DistributedOptions:
    """Everything `check --distributed` and `smoke --distributed` ask (one check under two commands: smoke's
    adds --data, --seed and --memory-limit)."""

    source: str | None = None
    lock: Path | None = None
    data_dir: Path | None = None
    seed: int = 0
    epochs: int = 2
    probe: bool = True
    loader: bool = True
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_limit: int | None = None  # bytes this rank may allocate past its start-up (RLIMIT_DATA)


def run_distributed(
    options: DistributedOptions, environ: Mapping[str, str] | None = None
) -> DistributedResult:
    """Meet the other ranks, measure, exchange digests and judge; call on every rank. A rank that does not
    report within `timeout_s` of the others is named (OperationalError, exit 3). With `memory_limit` this
    rank's process runs under it, as smoke's module and each of its DataLoader workers do (RLIMIT_DATA
    beyond what this process has mapped once torch is imported: envguard.machine.memlimit)."""
    o = options
    launch = detect(os.environ if environ is None else environ)
    # c10d logs every store timeout and closed socket (with C++ frames) on stderr; envguard's one line names
    # the rank instead (read when torch loads: a process that imported torch already keeps its own level)
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "FATAL")
    # gloo connects every pair of ranks at init unless told to connect a pair on first use: the exchange uses
    # a ring and rank 0's few senders, so 2-3 connections a rank instead of world_size - 1 (8,000 ranks would
    # need 8,000 sockets each, past the usual open-file limit)
    os.environ.setdefault("TORCH_GLOO_LAZY_INIT", "1")
    try:
        import torch.distributed  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            "--distributed needs torch in envguard's own environment (pip install torch)"
        ) from exc
    limit = DataLimit()
    if o.memory_limit is not None:  # past what torch's libraries map: the CUDA wheel's alone are 765 MiB
        limit.apply(o.memory_limit)
    meeting = connect(launch, o.timeout_s)
    measured = rank_report(
        o.source,
        launch.rank,
        launch.world_size,
        local_rank=launch.local_rank,
        lock=o.lock,
        data_dir=o.data_dir,
        seed=o.seed,
        epochs=o.epochs,
        probe=o.probe,
        loader=o.loader,
        limit=limit,
    )
    meeting.mark(MEASURED)
    meeting.wait(MEASURED)
    with process_group(meeting):
        exchanged = consensus(measured, launch.rank, launch.world_size)
    meeting.finish()
    wire = Wire(
        launcher=launch.launcher,
        rendezvous=f"{launch.rendezvous} ({launch.origin})",
        summary_bytes=exchanged.summary_bytes,
        detail_ranks=exchanged.detail_ranks,
        detail_bytes=exchanged.detail_bytes,
    )
    return analyze(exchanged.reports, launch.rank, details=exchanged.details, wire=wire)


def run_distributed_check(
    source: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **options: Any,
) -> DistributedResult:
    """`run_distributed` under its former keyword spelling (the command modules' call)."""
    return run_distributed(DistributedOptions(source, **options), environ)
