"""The distributed check's result (pure types): one epoch's shard check, what crossed the wire, and everything
the ranks reported."""

from __future__ import annotations

from dataclasses import dataclass

from envguard.distributed.records import Rank
from envguard.findings import Finding


@dataclass(frozen=True, slots=True)
class ShardCheck:
    """One epoch's shards: do they cover every index, with only the sampler's padding repeated?"""

    epoch: int
    dataset_size: int
    world_size: int
    padding: int
    shard_sizes: tuple[int, ...]
    missing: int
    repeated: int
    out_of_range: int

    @property
    def partition(self) -> bool:
        return self.missing == 0 and self.out_of_range == 0 and self.repeated == self.padding


@dataclass(frozen=True, slots=True)
class Wire:
    """What the exchange cost, in bytes: the all-gathered summary slot (every rank sends one and receives
    world_size of them), the package lists rank 0 asked for and from whom, and each rank's share of the
    shard-coverage all-reduce (4 bytes per sample and epoch)."""

    launcher: str
    rendezvous: str
    summary_bytes: int
    detail_ranks: tuple[int, ...]
    detail_bytes: int
    coverage_bytes: int


@dataclass(frozen=True, slots=True)
class DistributedResult:
    """This rank's view of the check: every rank judges the same summaries alike; only rank 0 holds the
    package lists it asked for, so only its findings name the packages that differ."""

    rank: int
    world_size: int
    ranks: tuple[Rank, ...]  # by rank
    shards: tuple[ShardCheck, ...]
    findings: tuple[Finding, ...]
    wire: Wire | None = None
