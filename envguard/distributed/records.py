"""What each rank measured (frozen records), and the plain data they cross between ranks as: every rank's
report is gathered with torch.distributed as a dict of JSON types and parsed back here, once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from envguard.model import FINGERPRINT_FIELDS, Fingerprints, fingerprints_from


@dataclass(frozen=True, slots=True)
class EpochShard:
    """One epoch's DistributedSampler indices on one rank; `loader_sha256`: what a DataLoader built on that
    sampler delivered, where one was run."""

    epoch: int
    indices: tuple[int, ...]
    sha256: str
    loader_sha256: str | None = None


@dataclass(frozen=True, slots=True)
class RankReport:
    """A rank that measured everything: its environment (packages, seeded-stream fingerprints, virtual
    packages, their hash) and its shards of the dataset."""

    rank: int
    host: str
    torch: str
    seed: int
    python: str
    prefix: str
    packages: tuple[str, ...]  # manager:name=version=build
    fingerprints: Fingerprints | None
    system: tuple[str, ...]  # virtual packages, name=version
    env_sha256: str
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
    error: str


Rank = RankReport | RankFailure


def fingerprint_values(fingerprints: Fingerprints | None) -> dict[str, str | None]:
    """The single-valued fingerprint fields by name ({} when the environment was not probed)."""
    if fingerprints is None:
        return {}
    return {name: getattr(fingerprints, name) for name in FINGERPRINT_FIELDS}


def to_wire(rank: Rank) -> dict[str, Any]:
    """A rank's report as plain data (what all_gather_object sends; the JSON `ranks` entries are this without
    packages and shards)."""
    head: dict[str, Any] = {
        "rank": rank.rank,
        "host": rank.host,
        "torch": rank.torch,
        "seed": rank.seed,
        "python": rank.python,
    }
    if isinstance(rank, RankFailure):
        return {**head, "error": rank.error}
    return {
        **head,
        "prefix": rank.prefix,
        "packages": list(rank.packages),
        "fingerprints": fingerprint_values(rank.fingerprints),
        "system": list(rank.system),
        "env_sha256": rank.env_sha256,
        "dataset_size": rank.dataset_size,
        "shards": [_shard_wire(shard) for shard in rank.shards],
    }


def _shard_wire(shard: EpochShard) -> dict[str, Any]:
    out: dict[str, Any] = {"epoch": shard.epoch, "indices": list(shard.indices), "sha256": shard.sha256}
    if shard.loader_sha256 is not None:
        out["loader_sha256"] = shard.loader_sha256
    return out


def from_wire(data: Mapping[str, Any]) -> Rank:
    """A gathered report back as its record (the one place a rank's plain data is read)."""
    head = (int(data["rank"]), str(data["host"]), str(data["torch"]), int(data["seed"]), str(data["python"]))
    if "error" in data:
        return RankFailure(*head, error=str(data["error"]))
    prints = data["fingerprints"]
    return RankReport(
        *head,
        prefix=str(data["prefix"]),
        packages=tuple(str(p) for p in data["packages"]),
        fingerprints=fingerprints_from(prints) if prints else None,
        system=tuple(str(s) for s in data["system"]),
        env_sha256=str(data["env_sha256"]),
        dataset_size=int(data["dataset_size"]),
        shards=tuple(
            EpochShard(
                epoch=int(s["epoch"]),
                indices=tuple(int(i) for i in s["indices"]),
                sha256=str(s["sha256"]),
                loader_sha256=str(s["loader_sha256"]) if "loader_sha256" in s else None,
            )
            for s in data["shards"]
        ),
    )
