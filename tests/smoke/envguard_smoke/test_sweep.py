"""sweep.py: the user's own DataLoader rebuilt with only the arguments --sweep may vary changed."""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType
from typing import Any

from envguard_smoke import interleave, sweep


def test_a_rebuilt_loader_keeps_everything_but_the_swept_argument(planted: ModuleType) -> None:
    given = planted.storage_bound_loader()
    built = sweep.rebuild(given, {"num_workers": 2})
    assert built.num_workers == 2 and built.batch_sampler.sampler is given.sampler
    assert built.sampler is given.sampler and built.sampler.generator is given.sampler.generator
    assert (built.batch_size, built.drop_last) == (16, False)
    assert built.collate_fn is planted.keyed_collate and built.prefetch_factor == 4
    assert built.persistent_workers is True
    zero = sweep.rebuild(given, {"num_workers": 0})  # DataLoader refuses prefetch/persistent without workers
    assert zero.prefetch_factor is None and zero.persistent_workers is False


SLEEPY = """
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Sleepy(Dataset):
    def __len__(self):
        return 100000

    def __getitem__(self, index):
        time.sleep(0.01)  # remote storage: a worker waits off the CPU
        return torch.zeros(4), index


def make():
    return DataLoader(Sleepy(), batch_size=4, num_workers=1)
"""


def _sweep(tmp_path: Path, seconds: float) -> list[dict[str, Any]]:
    (tmp_path / "sleepy_loader.py").write_text(SLEEPY)
    settings = {
        "loader": f"{tmp_path / 'sleepy_loader.py'}:make",
        "sweep": ["num_workers"],
        "workers": [0, 2],
    }
    (entry,) = sweep.run(settings, time.perf_counter() + seconds)
    return list(entry["rows"])


def test_the_configurations_are_measured_interleaved_round_by_round(tmp_path: Path) -> None:
    """issue 27: every configuration runs one pass per round, in a rotated order, so load that comes and
    goes moves them alike; rounds stop once the answer cannot change (0 and 1 worker surely slower than 2
    on a sleep-bound loader: after MIN_PASSES rounds, long before the time is up)."""
    rows = _sweep(tmp_path, 60.0)
    assert [r["workers"] for r in rows] == [0, 1, 2] and [r["given"] for r in rows] == [False, True, False]
    timeline = sorted((p["at_s"], p["round"], r["workers"]) for r in rows for p in r["passes"])
    assert [k for _, k, _ in timeline] == sorted(k for _, k, _ in timeline)  # round after round
    firsts = [next(w for _, k, w in timeline if k == n) for n in range(interleave.MIN_PASSES)]
    assert len(set(firsts)) == interleave.MIN_PASSES  # each round starts with another configuration
    counts = {r["workers"]: len(r["passes"]) for r in rows}
    # settled (2 workers surely 2x of 1 and 4x of 0) long before MAX_PASSES rounds or the 60 s
    assert interleave.MIN_PASSES <= counts[2] < interleave.MAX_PASSES
    # 0 workers, surely far slower after RETIRE_AFTER rounds, is left out of later rounds
    assert interleave.RETIRE_AFTER <= counts[0] <= counts[2]
    for row in rows:
        assert row["arrivals_s"] == row["passes"][0]["arrivals_s"]  # the first pass holds the start-up
        assert row["batches"] == sum(len(p["arrivals_s"]) for p in row["passes"])


def test_a_short_time_keeps_the_first_round_and_stops(tmp_path: Path) -> None:
    """Out of time after the first round: one pass each, no second round started."""
    rows = _sweep(tmp_path, 0.05)
    assert all(len(r.get("passes", [])) <= 1 for r in rows)
    assert any(r.get("passes") for r in rows) or all(r.get("skipped") == "budget" for r in rows)
