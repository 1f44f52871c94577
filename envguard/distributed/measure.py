"""What one rank measures (the part that touches the world): its environment's fingerprint, the samples it
sees under --data, and the indices its DistributedSampler (and a DataLoader over it) hands out per epoch."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import sys
from collections.abc import Sequence
from pathlib import Path

from envguard.distributed.records import EpochShard, Rank, RankFailure, RankReport, fingerprint_values
from envguard.errors import EnvguardError
from envguard.sources import read_live, resolve_prefix

DEFAULT_SAMPLES = 1001  # odd on purpose: DistributedSampler pads, and the check counts the padding


def _digest_ints(values: Sequence[int]) -> str:
    return hashlib.sha256(struct.pack(f"<{len(values)}q", *values)).hexdigest()


def dataset_size(data_dir: Path | None, default: int = DEFAULT_SAMPLES) -> int:
    """Samples this rank sees: files under --data (what a folder dataset would index), else `default`."""
    if data_dir is None:
        return default
    return sum(len(names) for _folder, _dirs, names in os.walk(data_dir))


def shard_report(
    size: int, rank: int, world: int, *, seed: int, epochs: int, loader: bool
) -> tuple[EpochShard, ...]:
    """Per epoch, this rank's DistributedSampler indices (and, with `loader`, what a DataLoader delivers)."""
    from torch.utils.data import DataLoader, DistributedSampler

    sampler = DistributedSampler(range(size), num_replicas=world, rank=rank, shuffle=True, seed=seed)  # type: ignore[var-annotated,arg-type]
    out: list[EpochShard] = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        indices = tuple(int(i) for i in sampler)
        delivered: str | None = None
        if loader:
            batches = DataLoader(range(size), batch_size=16, sampler=sampler)  # type: ignore[arg-type,var-annotated]
            delivered = _digest_ints([int(i) for batch in batches for i in batch])
        out.append(EpochShard(epoch, indices, _digest_ints(indices), delivered))
    return tuple(out)


def rank_report(
    source: str | None,
    rank: int,
    world: int,
    *,
    data_dir: Path | None,
    seed: int,
    epochs: int,
    probe: bool,
    loader: bool,
) -> Rank:
    """Everything this rank contributes; an error is reported, not raised, so the other ranks do not hang."""
    import torch

    head = (
        rank,
        socket.gethostname(),
        str(torch.__version__),
        seed,
        ".".join(map(str, sys.version_info[:3])),
    )
    try:
        prefix = resolve_prefix(source)
        env = read_live(prefix, probe=probe)
    except EnvguardError as exc:
        return RankFailure(*head, error=str(exc))
    packages = tuple(sorted(f"{p.manager}:{p.name}={p.version}={p.build}" for p in env.packages))
    prints = fingerprint_values(env.fingerprints)
    blob = json.dumps({"packages": list(packages), "fingerprints": prints}, sort_keys=True).encode()
    size = dataset_size(data_dir)
    return RankReport(
        *head,
        prefix=str(prefix),
        packages=packages,
        fingerprints=env.fingerprints,
        system=tuple(sorted(f"{v.name}={v.version}" for v in env.virtual_packages)),
        env_sha256=hashlib.sha256(blob).hexdigest(),
        dataset_size=size,
        shards=shard_report(size, rank, world, seed=seed, epochs=epochs, loader=loader),
    )
