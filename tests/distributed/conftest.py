"""Hand-built rank reports with real DistributedSampler shards, for the verdicts and the views."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from envguard.distributed.measure import shard_report
from envguard.distributed.records import RankReport
from envguard.model import Fingerprints


@pytest.fixture
def make_rank() -> Callable[..., RankReport]:
    """make_rank(rank, world, size=1001, seed=0, **fields): a rank's report with its real DistributedSampler
    shards (and a DataLoader's) and a fixed environment; `fields` replace any of its fields."""

    def build(rank: int, world: int, size: int = 1001, seed: int = 0, **fields: Any) -> RankReport:
        base: dict[str, Any] = {
            "rank": rank,
            "host": f"node{rank}",
            "torch": "2.13.0",
            "python": "3.11.7",
            "seed": seed,
            "prefix": "/env",
            "packages": ("conda:numpy=1.26.4=py311_0", "conda:python=3.11.9=h0_0"),
            "fingerprints": Fingerprints(torch_randperm="ab"),
            "system": ("__glibc=2.36",),
            "env_sha256": "e" * 64,
            "dataset_size": size,
            "shards": shard_report(size, rank, world, seed=seed, epochs=2, loader=True),
        }
        return RankReport(**{**base, **fields})

    return build
