"""Hand-built rank summaries with real DistributedSampler shards, for the verdicts and the views."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from envguard.distributed.measure import shard_report
from envguard.distributed.records import RankReport

EPOCHS = 2


@pytest.fixture
def make_rank() -> Callable[..., RankReport]:
    """make_rank(rank, world, size=1001, seed=0, **fields): a rank's summary with its real DistributedSampler
    shards (and a DataLoader's) and a fixed environment; `fields` replace any of its fields."""

    def build(rank: int, world: int, size: int = 1001, seed: int = 0, **fields: Any) -> RankReport:
        shards = shard_report(size, rank, world, seed=seed, epochs=EPOCHS, loader=True)
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
