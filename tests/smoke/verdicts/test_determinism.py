"""verdicts/determinism.py: real seeded DataLoader runs (the in-environment module, run in-process), read by
wire and judged by envguard; each planted dataset triggers its verdict, the synthetic one passes them all."""

from __future__ import annotations

from typing import Any

import pytest

from envguard.findings import Finding
from envguard.smoke.envguard_smoke import datasets
from envguard.smoke.envguard_smoke import seeded_runs as runs
from envguard.smoke.verdicts import determinism
from tests import smoke_planted
from tests.helpers import smoke_wire


def record(factory: Any, max_workers: int = 2) -> dict[str, Any]:
    return runs.run_all(factory, max_workers, seed=7, batch_size=4, limit=64, deadline=float("inf"))


def judged(data: dict[str, Any]) -> list[Finding]:
    return determinism.findings(smoke_wire({"determinism": data}, "test").determinism)


def by_check(found: list[Any]) -> dict[str, Any]:
    return {f.check: f for f in found}


def test_synthetic_dataset_passes_every_check() -> None:
    found = judged(record(lambda: datasets.Augmented(64)))
    checks = by_check(found)
    assert not [f for f in found if f.status == "FAIL"], found
    assert checks["order vs num_workers"].status == "PASS"
    assert checks["distinct worker draws"].status == "PASS"
    assert checks["epoch 2 differs from epoch 1"].status == "PASS"
    assert checks["run repeats (num_workers=2)"].status == "PASS"
    # worker i seeds from base_seed + i: draws depend on num_workers, which is information, not a failure
    assert checks["draws vs num_workers"].status == "INFO"


def test_generator_shared_from_parent_fails() -> None:
    found = by_check(judged(record(smoke_planted.SharedGenerator)))
    shared = found["distinct worker draws"]
    assert shared.status == "FAIL"
    assert "noise" in shared.evidence and "parent process" in shared.fix
    assert found["order vs num_workers"].status == "PASS"


def test_order_depending_on_worker_count_fails() -> None:
    found = by_check(judged(record(smoke_planted.WorkerSharded)))
    assert found["order vs num_workers"].status == "FAIL"
    assert "diverges at sample" in found["order vs num_workers"].evidence
    # an IterableDataset is not reshuffled between epochs
    assert found["epoch 2 differs from epoch 1"].status == "WARN"


def test_unsharded_iterable_repeats_samples() -> None:
    found = judged(record(smoke_planted.Unsharded))
    repeated = [f for f in found if f.check == "samples unique across workers"]
    assert repeated and repeated[0].status == "FAIL" and "get_worker_info" in repeated[0].fix


def test_unseeded_randomness_does_not_repeat() -> None:
    found = judged(record(smoke_planted.Unseeded))
    failing = {f.check for f in found if f.status == "FAIL"}
    assert {"draws repeat (num_workers=0)", "draws repeat (num_workers=2)"} <= failing


def test_persistent_workers_finding_is_measured() -> None:
    data = record(lambda: datasets.Augmented(64))
    plain = data["runs"]["wN"]["order_digests"][1]
    persistent = data["runs"]["wN-persistent"]["order_digests"][1]
    finding = by_check(judged(data))["persistent_workers and order"]
    assert finding.status == ("INFO" if plain != persistent else "PASS")
    assert data["runs"]["wN"]["order_digests"][0] == data["runs"]["wN-persistent"]["order_digests"][0]


def test_one_worker_cannot_check_distinct_draws() -> None:
    found = by_check(judged(record(smoke_planted.GlobalDraws, max_workers=1)))
    assert found["distinct worker draws"].status == "INFO"
    assert found["run repeats (num_workers=1)"].status == "PASS"


@pytest.mark.parametrize(
    "factory",
    [
        smoke_planted.AugmentedPairs,
        smoke_planted.AugmentedNamedTuples,
        smoke_planted.AugmentedTensors,
        smoke_planted.AugmentedDicts,
    ],
    ids=lambda f: f.__name__,
)
def test_augmented_samples_without_an_index_pass(factory: Any) -> None:
    """Per-sample augmentation from torch's global RNG (seeded per worker) changes the content with
    num_workers, never the order: samples are named by the index the sampler produced."""
    found = judged(record(factory))
    checks = by_check(found)
    assert not [f for f in found if f.status == "FAIL"], found
    assert checks["order vs num_workers"].status == "PASS"
    assert checks["run repeats (num_workers=0)"].status == "PASS"
    assert checks["run repeats (num_workers=2)"].status == "PASS"
    assert checks["distinct worker draws"].status == "PASS"
    assert checks["draws vs num_workers"].status == "INFO"


def test_seed_example_passes() -> None:
    """The seed article's Dataset: (torch.randn image, label), 10 ms per sample."""
    found = judged(
        runs.run_all(smoke_planted.SeedExample, 2, seed=7, batch_size=32, limit=64, deadline=float("inf"))
    )
    assert not [f for f in found if f.status == "FAIL"], found
    assert by_check(found)["order vs num_workers"].status == "PASS"


def test_same_index_different_sample_fails() -> None:
    """A dataset that reshuffles itself with fresh entropy: same sampler order, different files per index."""
    found = by_check(judged(record(smoke_planted.ShuffledInside)))
    assert found["order vs num_workers"].status == "PASS"  # the sampler's order is fine
    failing = found["draws repeat (num_workers=0)"]
    assert failing.status == "FAIL" and "same order" in failing.evidence and "fields 0, 1" in failing.evidence


def test_runs_that_did_not_run_warn() -> None:
    (missing,) = determinism.findings(None)
    assert missing.status == "WARN" and "did not run" in missing.evidence
    data = runs.run_all(lambda: datasets.Augmented(8), 2, seed=1, batch_size=4, limit=8, deadline=0.0)
    found = judged(data)
    assert any(f.check == "determinism runs" and f.status == "WARN" for f in found)
