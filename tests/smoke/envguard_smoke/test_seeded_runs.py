"""seeded_runs.py: the seeded DataLoader runs the determinism verdicts compare, as the module records them."""

from __future__ import annotations

from typing import Any

import pytest

from envguard.smoke.envguard_smoke import datasets
from envguard.smoke.envguard_smoke import seeded_runs as runs
from tests import smoke_planted


def record(factory: Any, max_workers: int = 2) -> dict[str, Any]:
    return runs.run_all(factory, max_workers, seed=7, batch_size=4, limit=64, deadline=float("inf"))


@pytest.mark.parametrize("limit", [8, 16])
def test_epochs_are_truncated_to_limit(limit: int) -> None:
    data = runs.run_all(
        lambda: datasets.Augmented(64), 0, seed=1, batch_size=4, limit=limit, deadline=float("inf")
    )
    assert all(len(epoch) == limit for run in data["runs"].values() for epoch in run["epochs"])


def test_deadline_skips_runs() -> None:
    data = runs.run_all(lambda: datasets.Augmented(8), 2, seed=1, batch_size=4, limit=8, deadline=0.0)
    assert data["runs"] == {} and "w0" in data["skipped"]


def test_identity_is_the_sampler_index() -> None:
    data = record(smoke_planted.AugmentedPairs, max_workers=0)
    ids = [s["id"] for s in data["runs"]["w0"]["epochs"][0]]
    assert sorted(ids) == sorted(f"index:{i}" for i in range(64))
