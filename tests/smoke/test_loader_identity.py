"""Issue 10, --loader as given: identity by index through the user's own collate_fn, and the training loop's
`dataset.set_epoch(e)` reaching persistent workers. Planted loaders (tests/pipeline_planted.py) run with real
worker processes; each verdict has a near-twin that must not trigger it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from envguard.findings import Finding
from envguard.smoke import pipeline, runner
from tests.helpers import REPO

PLANTED = REPO / "tests" / "pipeline_planted.py"
sys.path.insert(0, str(runner.PACKAGE_PARENT))  # the in-environment package, as the module imports itself
from envguard_smoke import user_loader  # noqa: E402

IDENTITY = "identity by index through your collate_fn"
SET_EPOCH = "set_epoch reaches the workers"


def verdicts(name: str) -> tuple[dict[str, Any], dict[str, Finding]]:
    record = user_loader.checks({"loader": f"{PLANTED}:{name}"}, 0.0)
    return record, {f.check: f for f in pipeline.findings({"loader": record})}


def test_set_epoch_that_never_reaches_persistent_workers_fails_with_the_fix() -> None:
    _record, found = verdicts("stale_epoch_loader")
    stale = found[SET_EPOCH]
    assert stale.status == "FAIL", stale
    assert (
        "equal what the dataset gives at epoch 0" in stale.evidence
        and "2 persistent workers" in stale.evidence
    )
    assert "share_memory_()" in stale.fix and "persistent_workers=False" in stale.fix
    assert found[IDENTITY].status == "PASS", found[IDENTITY]  # epoch 1 was right: not an identity problem


@pytest.mark.parametrize("name", ["shared_epoch_loader", "fresh_workers_epoch_loader"])
def test_set_epoch_twins_pass(name: str) -> None:
    _record, found = verdicts(name)
    assert found[SET_EPOCH].status == "PASS", found[SET_EPOCH]
    assert found[IDENTITY].status == "PASS", found[IDENTITY]


def test_persistent_workers_epoch_2_order_is_recorded() -> None:
    """Persistent workers' iterator keeps the sampler it was made with: epoch 2's order is still recorded."""
    record, found = verdicts("shared_epoch_loader")
    assert len(record["run1"][1]) == 32 and record["run1"][0] != record["run1"][1]
    assert found["epoch 2 differs from epoch 1"].status == "PASS"


@pytest.mark.parametrize(
    ("name", "collate"), [("dict_collate_loader", "dict_collate"), ("tuple_collate_loader", "tuple_collate")]
)
def test_custom_collate_fns_are_compared_whole_without_a_false_fail(name: str, collate: str) -> None:
    _record, found = verdicts(name)
    assert found[IDENTITY].status == "PASS", found[IDENTITY]
    assert (
        f"collate_fn={collate}" in found[IDENTITY].evidence
        and "8 batches of 2 epochs" in found[IDENTITY].evidence
    )
    assert not [f for f in found.values() if f.status == "FAIL"], found


def test_worker_dependent_samples_fail_identity_and_the_seeding_twin_passes() -> None:
    _record, bad = verdicts("worker_sharded_loader")
    assert bad[IDENTITY].status == "FAIL", bad[IDENTITY]
    assert "depends on the process that reads it" in bad[IDENTITY].evidence
    assert "get_worker_info()" in bad[IDENTITY].fix
    _record, good = verdicts("worker_seeded_loader")
    assert good[IDENTITY].status == "PASS", good[IDENTITY]


@pytest.mark.parametrize("name", ["noisy_loader", "numbered_collate_loader"])
def test_content_that_changes_on_every_read_is_not_judged(name: str) -> None:
    _record, found = verdicts(name)
    assert found[IDENTITY].status == "INFO" and "not judged" in found[IDENTITY].evidence, found[IDENTITY]


def test_the_watch_recorder_leaves_worker_init_fn_configuring_the_users_dataset(tmp_path: Path) -> None:
    """In a real run each read is recorded in the watch folder (a hung sample names itself); the recorder
    must forward what a worker_init_fn sets on get_worker_info().dataset, or the sharding bug would vanish."""
    user_loader.WATCH["dir"] = str(tmp_path)
    try:
        _record, found = verdicts("worker_sharded_loader")
    finally:
        user_loader.WATCH["dir"] = None
    assert found[IDENTITY].status == "FAIL", found[IDENTITY]
    assert len(list(tmp_path.glob("p*"))) >= 2  # the workers recorded their reads
