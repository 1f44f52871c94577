"""The distributed check's result (pure types): one epoch's shard check, what crossed the wire, and everything
the ranks reported."""

from __future__ import annotations

from dataclasses import dataclass

from envguard.distributed.records import Rank
from envguard.findings import Finding


@dataclass(frozen=True, slots=True)
class ShardCheck:
    """One epoch's shards: do they partition the dataset (the sampler's padding repeated, nothing missed)?
    They do when every rank shuffled the epoch into one order (`orders` distinct order digests: 1) and each
    holds its slice of it (`off_slice`: the ranks that do not)."""

    epoch: int
    dataset_size: int
    world_size: int
    padding: int
    shard_sizes: tuple[int, ...]
    orders: int
    off_slice: tuple[int, ...]

    @property
    def partition(self) -> bool:
        return self.orders == 1 and not self.off_slice


@dataclass(frozen=True, slots=True)
class Wire:
    """How the ranks met and what the exchange cost, in bytes: the all-gathered summary slot (every rank sends
    one and receives world_size of them), and the package lists rank 0 asked for, and from whom."""

    launcher: str
    rendezvous: str
    summary_bytes: int
    detail_ranks: tuple[int, ...]
    detail_bytes: int


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
