"""What one rank measures (the part that touches the world): its environment's digest and package list, the
lock it follows, the samples it sees under --data, and the indices its DistributedSampler (and a DataLoader
over it) hands out per epoch."""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from envguard.check import check_environment, find_lock, severity
from envguard.distributed.records import (
    EnvDetail,
    EpochShard,
    LockSeen,
    Rank,
    RankFailure,
    RankReport,
    detail_to_wire,
    encode,
    fingerprint_values,
)
from envguard.errors import BadInputError, EnvguardError
from envguard.formats import read_file
from envguard.machine.memlimit import DataLimit
from envguard.model import Environment
from envguard.prefix.lockref import recall
from envguard.sources import read_live, resolve_prefix
from envguard.textio import read_bytes

OUT_OF_MEMORY = "ran out of memory under its memory limit; raise --memory-limit or measure on a larger node"
SHOWN_CHANGES = 2  # drifts from the lock a rank names in its summary (with their count)
DEFAULT_SAMPLES = 1001  # odd on purpose: DistributedSampler pads, and each rank's slice includes the padding


@dataclass(frozen=True, slots=True)
class Measured:
    """This rank's contribution: the summary every rank gets, and the package list rank 0 may ask for (as
    the bytes it would cross as; empty when the rank could not measure)."""

    report: Rank
    detail: bytes


def _digest_ints(values: Sequence[int]) -> str:
    return hashlib.sha256(struct.pack(f"<{len(values)}q", *values)).hexdigest()


def dataset_size(data_dir: Path | None, default: int = DEFAULT_SAMPLES) -> int:
    """Samples this rank sees: files under --data (what a folder dataset would index), else `default`."""
    if data_dir is None:
        return default
    return sum(len(names) for _folder, _dirs, names in os.walk(data_dir))


def slice_of(order: Sequence[int], rank: int, world: int) -> tuple[int, ...]:
    """`rank`'s share of an epoch's shuffled `order`, as DistributedSampler (without drop_last) hands it out:
    the order repeated from its head up to a multiple of `world`, then every world-th index from `rank`."""
    if not order:
        return ()
    total = math.ceil(len(order) / world) * world
    padded = (list(order) * math.ceil(total / len(order)))[:total]
    return tuple(padded[rank:total:world])


def shard_report(
    size: int, rank: int, world: int, *, seed: int, epochs: int, loader: bool
) -> tuple[EpochShard, ...]:
    """Per epoch: this rank's DistributedSampler shard against the epoch's whole order (the same sampler for
    one replica), and, with `loader`, whether a DataLoader over the sampler delivers exactly the shard."""
    from torch.utils.data import DataLoader, DistributedSampler

    sampler = DistributedSampler(range(size), num_replicas=world, rank=rank, shuffle=True, seed=seed)  # type: ignore[var-annotated,arg-type]
    whole = DistributedSampler(range(size), num_replicas=1, rank=0, shuffle=True, seed=seed)  # type: ignore[var-annotated,arg-type]
    shards: list[EpochShard] = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        whole.set_epoch(epoch)
        indices, order = tuple(int(i) for i in sampler), tuple(int(i) for i in whole)
        delivered: bool | None = None
        if loader:
            batches = DataLoader(range(size), batch_size=16, sampler=sampler)  # type: ignore[arg-type,var-annotated]
            delivered = tuple(int(i) for batch in batches for i in batch) == indices
        in_slice = indices == slice_of(order, rank, world)
        shards.append(EpochShard(epoch, len(indices), _digest_ints(order), in_slice, delivered))
    return tuple(shards)


def lock_seen(lock: Path | None, prefix: Path, env: Environment | None = None) -> LockSeen | None:
    """The lock this rank follows: `lock` as given, else the one its environment recorded, else the project's
    found from the working folder; None when there is none. With `env` (this rank's environment), it is
    compared with the lock as `envguard check` compares them: a cluster that agrees with itself but not
    with its lock is stale on every rank."""
    if lock is not None:
        path, how = lock.expanduser().resolve(), "--lock"
    elif (ref := recall(prefix)) is not None:
        path, how = ref.lock, "recorded"
    else:
        try:
            path, how = find_lock(), "project"
        except BadInputError:
            return None
    try:
        digest = hashlib.sha256(read_bytes(path)).hexdigest()
    except (OSError, EnvguardError):
        digest = ""
    if env is None:
        return LockSeen(str(path), digest, how)
    return LockSeen(str(path), digest, how, *against_lock(env, path))


def against_lock(env: Environment, lock: Path) -> tuple[int | None, tuple[str, ...]]:
    """(drift count, the first SHOWN_CHANGES drifts as check words them) of `env` against `lock`; (None,
    (why,)) when the lock cannot be read here."""
    try:
        target = read_file(lock, platform=env.platform)
        report = check_environment(env, target)
    except (OSError, EnvguardError) as exc:
        return None, (_short(str(exc)),)
    drifted = [d for d in report.findings if severity(d) == "drift"]
    return len(drifted), tuple(_short(d.message()) for d in drifted[:SHOWN_CHANGES])


def _short(text: str, limit: int = 100) -> str:
    """One wire-sized line (the summary slot is 1 KiB a rank)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def rank_report(
    source: str | None,
    rank: int,
    world: int,
    *,
    local_rank: int | None = None,
    lock: Path | None = None,
    data_dir: Path | None = None,
    seed: int,
    epochs: int,
    probe: bool,
    loader: bool,
    limit: DataLimit | None = None,
) -> Measured:
    """Everything this rank contributes; an error is reported, not raised, so the other ranks do not hang (an
    allocation refused under `smoke --distributed --memory-limit` too)."""
    import torch

    head = (
        rank,
        socket.gethostname(),
        str(torch.__version__),
        seed,
        ".".join(map(str, sys.version_info[:3])),
        local_rank,
    )
    try:
        prefix = resolve_prefix(source)
        env = read_live(prefix, probe=probe)
        followed = lock_seen(lock, prefix, env)
    except EnvguardError as exc:
        return Measured(RankFailure(*head, error=str(exc)), b"")
    except MemoryError:
        if limit is not None:  # the reserve given back: room to exchange the report with the other ranks
            limit.release()
        return Measured(RankFailure(*head, error=OUT_OF_MEMORY), b"")
    packages = tuple(sorted(f"{p.manager}:{p.name}={p.version}={p.build}" for p in env.packages))
    prints = fingerprint_values(env.fingerprints)
    blob = json.dumps({"packages": list(packages), "fingerprints": prints}, sort_keys=True).encode()
    size = dataset_size(data_dir)
    try:
        shards = shard_report(size, rank, world, seed=seed, epochs=epochs, loader=loader)
    except MemoryError:
        if limit is not None:  # the reserve given back: room to exchange the report with the other ranks
            limit.release()
        return Measured(RankFailure(*head, error=OUT_OF_MEMORY), b"")
    detail = encode(detail_to_wire(EnvDetail(rank, packages, env.fingerprints)))
    report = RankReport(
        *head,
        prefix=str(prefix),
        env_sha256=hashlib.sha256(blob).hexdigest(),
        packages=len(packages),
        package_list_bytes=len(detail),
        system=tuple(sorted(f"{v.name}={v.version}" for v in env.virtual_packages)),
        lock=followed,
        dataset_size=size,
        shards=shards,
    )
    return Measured(report, detail)
