"""gpu_phase.py on device=cpu: the same functions a CUDA run uses (only CUDA events and NVML differ).

Batches have the shapes real datasets give: dicts, (tensor, label) tuples, named tuples, nested lists.
"""

from __future__ import annotations

import time
from collections import namedtuple
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader

from envguard.smoke.envguard_smoke import gpu_phase as gpu
from envguard.smoke.envguard_smoke import main as smoke_main
from envguard.smoke.envguard_smoke.datasets import IOBound
from tests import smoke_planted
from tests.helpers import smoke_wire

Pair = namedtuple("Pair", ["image", "label"])
CPU = torch.device("cpu")


def batches() -> list[Any]:
    image = torch.rand(4, 3, 8, 8)
    return [
        {"image": image, "label": torch.arange(4), "meta": {"path": ["a", "b", "c", "d"], "scale": 0.5}},
        (image, torch.arange(4)),
        Pair(image, torch.arange(4)),
        [image, [torch.zeros(2, dtype=torch.int64), {"mask": torch.ones(4, dtype=torch.bool)}], "text", 3],
        image,
    ]


@pytest.mark.parametrize("batch", batches(), ids=["dict", "tuple", "namedtuple", "nested", "tensor"])
def test_roundtrip_takes_any_nested_batch(batch: Any) -> None:
    trip = gpu.roundtrip(CPU, batch)
    assert trip["equal"] is True and trip["host"] == trip["after_device"]
    assert trip["tensors"] >= 1 and trip["bytes"] > 0


def test_to_device_keeps_the_structure() -> None:
    moved = gpu.to_device(Pair(torch.ones(2), {"x": (torch.zeros(1), "k")}), CPU)
    assert type(moved) is Pair and isinstance(moved.label, dict) and moved.label["x"][1] == "k"
    assert torch.equal(moved.image, torch.ones(2))


def test_roundtrip_of_a_real_loader_batch() -> None:
    loader = DataLoader(smoke_planted.AugmentedPairs(), batch_size=8)
    trip = gpu.roundtrip(CPU, next(iter(loader)))
    assert trip["equal"] is True


def test_bandwidth_on_cpu_is_a_bounded_memcpy() -> None:
    result = gpu.bandwidth(CPU, nbytes=8 * 1024 * 1024, reps=3)
    assert 0.05 < result["pageable_gbps"] < 1000  # a memcpy: positive and below any memory bus
    assert result["pinned_gbps"] is None and "CUDA" in result["pinned_reason"]
    assert result["link"]["available"] is False


def test_idle_fraction_on_cpu_times_a_starved_loop() -> None:
    """One I/O-bound worker (8 x 10 ms per batch) feeding a short step: after warm-up, 12 timed batches cannot
    span less than the worker needs to make them (minus the two it may have prefetched)."""
    dataset = IOBound(8 * 20, 10.0, (3, 16, 16))
    measured = gpu.idle_fraction(
        CPU, dataset, workers=1, pin_memory=False, batch_size=8, batches=12, step_ms=2.0
    )
    assert measured["warmup_batches"] == 2 and measured["batches"] == 12
    assert measured["span_ms"] >= (12 - 2 - 1) * 80.0 and 0 < measured["busy_ms"] <= measured["span_ms"]
    assert measured["idle_fraction"] == pytest.approx(1 - measured["busy_ms"] / measured["span_ms"], abs=1e-3)


def test_gpu_phase_runs_on_cpu_through_main() -> None:
    """The module's own GPU phase (dataset batch -> roundtrip -> bandwidth -> idle), forced onto the CPU."""
    settings = {"io_ms": 2.0, "batch_size": 8, "workers": [0, 1], "shape": [3, 16, 16], "copy_bytes": 4 << 20}
    result: dict[str, Any] = {"errors": []}
    smoke_main._gpu(settings, result, "cpu", time.perf_counter() + 20)
    assert not result["errors"]
    phase = result["gpu"]
    assert phase["device"] == "cpu" and phase["roundtrip"]["equal"] is True
    assert phase["idle"] and all(0.0 <= r["idle_fraction"] <= 1.0 for r in phase["idle"])
    read = smoke_wire({"gpu": phase}, "test").gpu
    assert read is not None and read.roundtrip is not None and read.roundtrip.equal
    assert read.h2d is not None and read.h2d.pinned_gbps is None and not read.h2d.link.available


def test_gpu_phase_uses_the_users_dataset_batches(tmp_path: Any) -> None:
    settings = {
        "io_ms": 2.0,
        "batch_size": 4,
        "workers": [0],
        "shape": [3, 16, 16],
        "copy_bytes": 1 << 20,
        "dataset": f"{smoke_planted.__file__}:AugmentedPairs",
    }
    result: dict[str, Any] = {"errors": []}
    smoke_main._gpu(settings, result, "cpu", time.perf_counter() + 20)
    trip = result["gpu"]["roundtrip"]
    assert trip["equal"] is True and trip["structure"] == "list[Tensor, Tensor]"
