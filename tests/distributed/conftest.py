"""Hand-built rank summaries with real DistributedSampler shards, and the coverage the ranks' all-reduce would
count from real shards, for the verdicts and the views."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from envguard.distributed.measure import shard_report
from envguard.distributed.records import Coverage, RankReport, coverage, tally

EPOCHS = 2


@pytest.fixture
def make_rank() -> Callable[..., RankReport]:
    """make_rank(rank, world, size=1001, seed=0, **fields): a rank's summary with its real DistributedSampler
    shards (and a DataLoader's) and a fixed environment; `fields` replace any of its fields."""

    def build(rank: int, world: int, size: int = 1001, seed: int = 0, **fields: Any) -> RankReport:
        shards, _indices = shard_report(size, rank, world, seed=seed, epochs=EPOCHS, loader=True)
        base: dict[str, Any] = {
            "rank": rank,
            "host": f"node{rank}",
            "torch": "2.13.0",
            "python": "3.11.7",
            "seed": seed,
            "local_rank": 0,
            "prefix": "/env",
            "env_sha256": "e" * 64,
            "packages": 2,
            "package_list_bytes": 120,
            "system": ("__glibc=2.36",),
            "lock": None,
            "dataset_size": size,
            "shards": shards,
        }
        return RankReport(**{**base, **fields})

    return build


@pytest.fixture
def covered() -> Callable[..., tuple[Coverage, ...]]:
    """covered(world, size=1001, seed=0, samplers=None): each epoch's Coverage as the all-reduce sums the
    ranks' tallies, the rank r using a DistributedSampler built with rank samplers[r] (default: r)."""

    def build(
        world: int, size: int = 1001, seed: int = 0, samplers: Sequence[int] | None = None
    ) -> tuple[Coverage, ...]:
        shards = [
            shard_report(size, r, world, seed=seed, epochs=EPOCHS, loader=False)[1]
            for r in (samplers if samplers is not None else range(world))
        ]
        out = []
        for epoch in range(EPOCHS):
            tallies = [tally(indices[epoch], size) for indices in shards]
            out.append(coverage(epoch, [sum(column) for column in zip(*tallies, strict=True)]))
        return tuple(out)

    return build
