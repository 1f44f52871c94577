"""Watch's GPU verdicts over hand-built summaries: no GPU data and why, utilisation, pageable copies."""

from __future__ import annotations

import dataclasses

import msgspec

from envguard.watch.verdicts.gpu import gpu_findings
from tests.watch.helpers import figures, loader, summary

PINNED = loader(100, 1.0, 9.0)
PINNED = msgspec.structs.replace(PINNED, settings=dataclasses.replace(PINNED.settings, pin_memory=True))


def test_without_gpu_data_it_says_why() -> None:
    (found,) = gpu_findings(summary(gpu_note="no GPU: NVML sees no device"))
    assert (found.status, found.evidence) == ("INFO", "no GPU: NVML sees no device")
    assert gpu_findings(summary(gpu_note=""))[0].evidence == "no GPU"


def test_pageable_copies_on_a_gpu_run_warn() -> None:
    gpu_run = {"gpus_sampled": True, "gpu_used": True, "figures": figures(gpu_util=64.0)}
    found = gpu_findings(summary(loader(100, 1.0, 9.0), **gpu_run))
    assert [(f.check, f.status) for f in found] == [
        ("GPU utilisation", "INFO"),
        ("host -> device copies", "WARN"),
    ]
    assert "mean 64%" in found[0].evidence
    assert [f.status for f in gpu_findings(summary(PINNED, **gpu_run))] == ["INFO"]
    assert [
        f.status for f in gpu_findings(summary(loader(100, 1.0, 9.0), **{**gpu_run, "gpu_used": False}))
    ] == ["INFO"]
