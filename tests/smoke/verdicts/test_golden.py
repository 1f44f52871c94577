"""verdicts/golden.py: the environment's seeded streams against the fingerprints recorded in a lock."""

from __future__ import annotations

from envguard.model import Fingerprints
from envguard.smoke.verdicts.golden import golden
from tests.helpers import smoke_wire

HERE = {
    "torch_randperm": "a" * 64,
    "dataloader_order": "b" * 64,
    "numpy_legacy": "c" * 64,
    "numpy_generator": None,
    "torch_version": "2.13.0",
    "numpy_version": "2.4.6",
}


def test_golden_streams() -> None:
    here = smoke_wire({"golden": HERE}, "test").golden  # the fingerprint probe's output, as read in a run
    same = Fingerprints(
        torch_randperm="a" * 64, dataloader_order="b" * 64, numpy_legacy="c" * 64, torch_version="2.13.0"
    )
    assert {f.status for f in golden(here, same, "conda-lock.yml")} == {"PASS"}
    moved = Fingerprints(torch_randperm="f" * 64, dataloader_order="b" * 64, torch_version="2.1.0")
    found = {f.check: f for f in golden(here, moved, "conda-lock.yml")}
    assert (
        found["torch.randperm"].status == "FAIL"
        and "torch 2.1.0 -> 2.13.0" in found["torch.randperm"].evidence
    )
    assert found["DataLoader shuffle order"].status == "PASS"
    assert golden(here, None, "old.yml")[0].status == "WARN"


def test_streams_not_computed_or_not_recorded() -> None:
    (missing,) = golden(None, Fingerprints(torch_randperm="a" * 64), "conda-lock.yml")
    assert missing.status == "WARN" and "could not be computed" in missing.evidence
    (none,) = golden(Fingerprints(python="3.11.7"), Fingerprints(python="3.11.7"), "conda-lock.yml")
    assert none.status == "INFO" and "no stream recorded on both sides" in none.evidence
