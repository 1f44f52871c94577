"""What each rank measured (frozen records), and the plain data they cross between ranks as, parsed back here
once.

Every rank sends every other a summary of digests and counts (`to_wire`: a few hundred bytes, whatever the
environment's size or the dataset's); only the ranks asked for it send rank 0 their package list
(`EnvDetail`). Shards cross as digests too: each epoch's shuffled order, and whether this rank's shard is its
slice of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from envguard.model import FINGERPRINT_FIELDS, Fingerprints, fingerprints_from


@dataclass(frozen=True, slots=True)
class EpochShard:
    """One epoch's DistributedSampler shard on one rank, without its indices: how many, the SHA-256 of the
    epoch's whole shuffled order as this rank's torch computes it, whether the shard is this rank's slice of
    that order (padding included), and whether a DataLoader built on the sampler delivered exactly the shard
    (None where no DataLoader was run). Ranks that share the order and each hold their slice partition the
    dataset."""

    epoch: int
    length: int
    order_sha256: str
    in_slice: bool
    loader_delivers: bool | None = None


@dataclass(frozen=True, slots=True)
class LockSeen:
    """The lock a rank follows and the SHA-256 of its bytes on that rank ("" when it could not be read there).
    `how`: "--lock" (given), "recorded" (the environment's own record of its lock) or "project" (found from
    the working folder)."""

    path: str
    sha256: str
    how: str
    drift: int | None = None  # this rank's environment against the lock, as `check` counts it; None: unread
    changes: tuple[str, ...] = ()  # the first few of them, as `check` words them (or why it was not read)


@dataclass(frozen=True, slots=True)
class RankReport:
    """A rank that measured everything, as every rank sees it: its environment's digest (packages and
    seeded-stream fingerprints), package count (and its package list's size on the wire, what rank 0
    receives if it asks), virtual packages, lock, and shards of the dataset."""

    rank: int
    host: str
    torch: str
    seed: int
    python: str
    local_rank: int | None
    prefix: str
    env_sha256: str
    packages: int
    package_list_bytes: int
    system: tuple[str, ...]  # virtual packages, name=version
    lock: LockSeen | None
    dataset_size: int
    shards: tuple[EpochShard, ...]


@dataclass(frozen=True, slots=True)
class RankFailure:
    """A rank that could not measure (its environment could not be read): reported, so no rank hangs."""

    rank: int
    host: str
    torch: str
    seed: int
    python: str
    local_rank: int | None
    error: str


Rank = RankReport | RankFailure


@dataclass(frozen=True, slots=True)
class EnvDetail:
    """What a rank sends rank 0 only when asked (its environment differs from the majority's, or it holds the
    majority's for reference): its packages (manager:name=version=build) and fingerprints."""

    rank: int
    packages: tuple[str, ...]
    fingerprints: Fingerprints | None


def fingerprint_values(fingerprints: Fingerprints | None) -> dict[str, str | None]:
    """The single-valued fingerprint fields by name ({} when the environment was not probed)."""
    if fingerprints is None:
        return {}
    return {name: getattr(fingerprints, name) for name in FINGERPRINT_FIELDS}


def to_wire(rank: Rank) -> dict[str, Any]:
    """A rank's summary as plain data (what every rank all-gathers, and the JSON `ranks` entries)."""
    head: dict[str, Any] = {
        "rank": rank.rank,
        "host": rank.host,
        "torch": rank.torch,
        "seed": rank.seed,
        "python": rank.python,
        "local_rank": rank.local_rank,
    }
    if isinstance(rank, RankFailure):
        return {**head, "error": rank.error}
    lock = rank.lock
    return {
        **head,
        "prefix": rank.prefix,
        "env_sha256": rank.env_sha256,
        "packages": rank.packages,
        "package_list_bytes": rank.package_list_bytes,
        "system": list(rank.system),
        "lock": None if lock is None else _lock_wire(lock),
        "dataset_size": rank.dataset_size,
        "shards": [_shard_wire(shard) for shard in rank.shards],
    }


def _lock_wire(lock: LockSeen) -> dict[str, Any]:
    return {
        "path": lock.path,
        "sha256": lock.sha256,
        "how": lock.how,
        "drift": lock.drift,
        "changes": list(lock.changes),
    }


def _lock_from(data: Mapping[str, Any]) -> LockSeen:
    drift = data["drift"]
    return LockSeen(
        str(data["path"]),
        str(data["sha256"]),
        str(data["how"]),
        drift=None if drift is None else int(drift),
        changes=tuple(str(c) for c in data["changes"]),
    )


def _shard_wire(shard: EpochShard) -> dict[str, Any]:
    return {
        "epoch": shard.epoch,
        "length": shard.length,
        "order_sha256": shard.order_sha256,
        "in_slice": shard.in_slice,
        "loader_delivers": shard.loader_delivers,
    }


def from_wire(data: Mapping[str, Any]) -> Rank:
    """A gathered summary back as its record (the one place a rank's plain data is read)."""
    local = data["local_rank"]
    head = (
        int(data["rank"]),
        str(data["host"]),
        str(data["torch"]),
        int(data["seed"]),
        str(data["python"]),
        None if local is None else int(local),
    )
    if "error" in data:
        return RankFailure(*head, error=str(data["error"]))
    lock = data["lock"]
    return RankReport(
        *head,
        prefix=str(data["prefix"]),
        env_sha256=str(data["env_sha256"]),
        packages=int(data["packages"]),
        package_list_bytes=int(data["package_list_bytes"]),
        system=tuple(str(s) for s in data["system"]),
        lock=None if lock is None else _lock_from(lock),
        dataset_size=int(data["dataset_size"]),
        shards=tuple(
            EpochShard(
                epoch=int(s["epoch"]),
                length=int(s["length"]),
                order_sha256=str(s["order_sha256"]),
                in_slice=bool(s["in_slice"]),
                loader_delivers=None if s["loader_delivers"] is None else bool(s["loader_delivers"]),
            )
            for s in data["shards"]
        ),
    )


def encode(data: Any) -> bytes:
    """Plain data as the compact JSON bytes that cross between ranks."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def detail_to_wire(detail: EnvDetail) -> dict[str, Any]:
    return {
        "rank": detail.rank,
        "packages": list(detail.packages),
        "fingerprints": fingerprint_values(detail.fingerprints),
    }


def detail_from_wire(data: Mapping[str, Any]) -> EnvDetail:
    prints = data["fingerprints"]
    return EnvDetail(
        rank=int(data["rank"]),
        packages=tuple(str(p) for p in data["packages"]),
        fingerprints=fingerprints_from(prints) if prints else None,
    )
