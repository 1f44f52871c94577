"""timing.py: one DataLoader configuration timed batch by batch with real workers (only raw timings leave
it; rates.py makes them rates)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from envguard.smoke.envguard_smoke import timing
from envguard.smoke.envguard_smoke.datasets import IOBound
from envguard.smoke.report import DatasetResult


def test_measure_times_a_real_loader(summarize: Callable[..., DatasetResult]) -> None:
    row = timing.measure(
        IOBound(128, 2.0, (3, 8, 8)), workers=2, pin_memory=False, persistent=False, batch_size=8, batches=16
    )
    assert row["batches"] == 16 and len(row["arrivals_s"]) == 16 and row["epoch2_first_batch_s"] > 0
    assert row["batch_bytes"] == 8 * 3 * 8 * 8 * 4 + 8 * 8 * 2  # float32 images plus int64 index and label
    summary = summarize({"name": "io", "nominal_latency_ms": 2.0, "nominal_cpu_ms": 0.0, "rows": [row]})
    measured = summary.rows[0]
    assert measured.ideal_per_s == pytest.approx(1000) and measured.rounds == 8
    # a real rate is below the physical limit, or it is flagged and not reported
    assert (measured.efficiency is not None and 0 < measured.efficiency <= 1.05) or measured.unreliable


def test_num_workers_zero_runs_with_one_intra_op_thread() -> None:
    import torch

    before = torch.get_num_threads()
    row = timing.measure(
        IOBound(32, 1.0, (3, 8, 8)), workers=0, pin_memory=False, persistent=False, batch_size=8, batches=4
    )
    assert row["main_threads"] == 1 and torch.get_num_threads() == before
