"""GPU measurements (only when CUDA is present): host-to-device bandwidth, a round-trip hash, the PCIe link
read under load, and how idle the GPU sits while a fake training step consumes DataLoader batches.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.utils.data import DataLoader

from .canonical import digest
from .datasets import IOBound

COPY_BYTES = 256 * 1024 * 1024
REPS = 5


def _event() -> Any:
    return torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]


def _median(values: List[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _timed_copies(dst: Any, src: Any, reps: int) -> float:
    """Median milliseconds of one host-to-device copy, timed with CUDA events."""
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = _event(), _event()
        start.record()
        dst.copy_(src, non_blocking=True)
        end.record()
        end.synchronize()
        times.append(float(start.elapsed_time(end)))
    return _median(times)


def bandwidth(device: Any, nbytes: int = COPY_BYTES, reps: int = REPS) -> Dict[str, Any]:
    """Pageable and pinned host-to-device GB/s, plus the PCIe link read by NVML while pinned copies run."""
    pageable = torch.empty(nbytes, dtype=torch.uint8).fill_(1)
    pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True).fill_(1)
    dst = torch.empty(nbytes, dtype=torch.uint8, device=device)
    result: Dict[str, Any] = {"bytes": nbytes, "reps": reps}
    for name, src in (("pageable", pageable), ("pinned", pinned)):
        millis = _timed_copies(dst, src, reps)
        result[name + "_gbps"] = round(nbytes / (millis / 1000.0) / 1e9, 3) if millis > 0 else None
    for _ in range(24):  # keep the link busy: idle links downshift their generation and width
        dst.copy_(pinned, non_blocking=True)
    result["link"] = nvml_link(device)
    torch.cuda.synchronize()
    del pageable, pinned, dst
    return result


def nvml_link(device: Any) -> Dict[str, Any]:
    """PCIe generation and width now and at most, from NVML (nvidia-ml-py) when it is installed here."""
    try:
        import pynvml
    except ImportError:
        return {"available": False, "reason": "nvidia-ml-py is not installed in this environment"}
    try:
        pynvml.nvmlInit()
        handle = _nvml_handle(pynvml, device)
        return {
            "available": True,
            "gen": int(pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)),
            "width": int(pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)),
            "max_gen": int(pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle)),
            "max_width": int(pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle)),
        }
    except Exception as exc:  # NVMLError and friends: report, never crash the smoke test
        return {"available": False, "reason": "%s: %s" % (type(exc).__name__, exc)}


def _nvml_handle(pynvml: Any, device: Any) -> Any:
    props = torch.cuda.get_device_properties(device)
    uuid = getattr(props, "uuid", None)
    if uuid is not None:
        text = str(uuid)
        return pynvml.nvmlDeviceGetHandleByUUID(text if text.startswith("GPU-") else "GPU-" + text)
    bus = getattr(props, "pci_bus_id", None)
    if bus is not None:
        domain, dev = getattr(props, "pci_domain_id", 0), getattr(props, "pci_device_id", 0)
        return pynvml.nvmlDeviceGetHandleByPciBusId("%08x:%02x:%02x.0" % (domain, bus, dev))
    return pynvml.nvmlDeviceGetHandleByIndex(device.index or 0)


def roundtrip(device: Any, batch: Any) -> Dict[str, Any]:
    """A batch copied host -> device -> host must hash the same."""
    before = digest(batch)
    after = digest(batch.to(device).cpu())
    return {"host": before, "after_device": after, "equal": before == after}


def _fake_step(device: Any, step_ms: float) -> Tuple[Any, int]:
    """A matmul repeated to take about `step_ms` on this GPU; returns (matrix, repetitions)."""
    matrix = torch.randn(1024, 1024, device=device)
    torch.cuda.synchronize()
    start, end = _event(), _event()
    start.record()
    for _ in range(10):
        matrix = (matrix @ matrix).tanh_()
    end.record()
    end.synchronize()
    per = max(float(start.elapsed_time(end)) / 10.0, 1e-3)
    return matrix, max(1, round(step_ms / per))


def idle_fraction(
    device: Any,
    *,
    workers: int,
    pin_memory: bool,
    latency_ms: float,
    batch_size: int,
    batches: int,
    step_ms: float,
) -> Dict[str, Any]:
    """Fraction of the GPU timeline spent waiting for data while a fake step consumes loader batches."""
    matrix, reps = _fake_step(device, step_ms)
    dataset = IOBound(batch_size * batches, latency_ms, (3, 64, 64))
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=workers, pin_memory=pin_memory)
    marks = []
    for batch in loader:
        start, end = _event(), _event()
        start.record()
        image = batch["image"].to(device, non_blocking=pin_memory)
        matrix = matrix + image.float().mean() * 0  # the step depends on the batch, as training would
        for _ in range(reps):
            matrix = (matrix @ matrix).tanh_()
        end.record()
        marks.append((start, end))
    torch.cuda.synchronize()
    busy = sum(float(s.elapsed_time(e)) for s, e in marks)
    span = float(marks[0][0].elapsed_time(marks[-1][1])) if marks else 0.0
    return {
        "workers": workers,
        "pin_memory": pin_memory,
        "batches": len(marks),
        "step_ms": step_ms,
        "busy_ms": round(busy, 3),
        "span_ms": round(span, 3),
        "idle_fraction": round(1.0 - busy / span, 4) if span > 0 else None,
    }


def run(
    device_name: str, sample_batch: Any, settings: Dict[str, Any], deadline: float
) -> Optional[Dict[str, Any]]:
    """All GPU measurements that fit before `deadline`."""
    device = torch.device(device_name)
    props = torch.cuda.get_device_properties(device)
    result: Dict[str, Any] = {
        "name": props.name,
        "capability": "sm_%d%d" % (props.major, props.minor),
        "memory_bytes": int(props.total_memory),
        "arch_list": list(torch.cuda.get_arch_list()),
    }
    result["roundtrip"] = roundtrip(device, sample_batch)
    result["h2d"] = bandwidth(device)
    latency, batch_size = settings["latency_ms"], settings["batch_size"]
    most = max(1, settings["max_workers"])
    step_ms = batch_size * latency / most
    result["idle"] = []
    for workers in sorted({0, most}):
        if time.perf_counter() + 8 * batch_size * latency / 1000.0 > deadline:
            break
        measured = idle_fraction(
            device,
            workers=workers,
            pin_memory=True,
            latency_ms=latency,
            batch_size=batch_size,
            batches=6,
            step_ms=step_ms,
        )
        result["idle"].append(measured)
    return result
