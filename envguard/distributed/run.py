"""The distributed check, under torchrun: every rank reports its environment fingerprint and its
DistributedSampler shards; the reports are gathered with torch.distributed (gloo, CPU) and every rank judges
the same data, so all ranks exit alike while only rank 0 prints.

    torchrun --standalone --nproc-per-node=2 -m envguard smoke --distributed
    torchrun --standalone --nproc-per-node=2 -m envguard check --distributed
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from envguard.distributed.measure import rank_report
from envguard.distributed.records import from_wire, to_wire
from envguard.distributed.result import DistributedResult
from envguard.distributed.verdicts import analyze
from envguard.errors import UsageError


def run_distributed_check(
    source: str | None = None,
    *,
    data_dir: Path | None = None,
    seed: int = 0,
    epochs: int = 2,
    probe: bool = True,
    loader: bool = True,
    timeout_s: float = 300.0,
) -> DistributedResult:
    """Gather every rank's report over torch.distributed (gloo) and judge them; call on every rank."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        raise UsageError(
            "--distributed runs under torchrun, e.g. "
            "`torchrun --standalone --nproc-per-node=2 -m envguard smoke --distributed`"
        )
    try:
        import torch.distributed as dist
    except ImportError as exc:
        raise UsageError(
            "--distributed needs torch in envguard's own environment (pip install torch)"
        ) from exc
    owned = not dist.is_initialized()
    if owned:
        dist.init_process_group("gloo", timeout=timedelta(seconds=timeout_s))
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        mine = rank_report(
            source, rank, world, data_dir=data_dir, seed=seed, epochs=epochs, probe=probe, loader=loader
        )
        gathered: list[Any] = [None] * world
        dist.all_gather_object(gathered, to_wire(mine))
    finally:
        if owned:
            dist.destroy_process_group()
    return analyze([from_wire(report) for report in gathered], rank)
