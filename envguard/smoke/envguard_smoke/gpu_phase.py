"""GPU measurements: a round-trip hash of a real batch, host-to-device bandwidth with the PCIe link read under
load, and how idle the device sits while a fake training step consumes DataLoader batches.

Every function takes any torch device. On CUDA the timings come from CUDA events and the link from NVML; on
the CPU the same code runs with perf_counter timings (the test suite runs it there), so only those two parts
are GPU-only. Batches may be any nesting of tensors, dicts, lists, tuples and named tuples.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from torch.utils.data import DataLoader

from .canonical import digest

COPY_BYTES = 256 * 1024 * 1024
REPS = 5
LINK_LOAD_S = 1.0  # sustained copies before the link is read: idle links downshift generation and width
WARMUP_STEPS = 3


def to_device(batch: Any, device: Any, non_blocking: bool = False) -> Any:
    """The batch with every tensor moved to `device`, its structure (dict, list, tuple, named tuple) kept."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return type(batch)((k, to_device(v, device, non_blocking)) for k, v in batch.items())
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(to_device(v, device, non_blocking) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device, non_blocking) for v in batch)
    return batch


def tensors(batch: Any) -> List[Any]:
    """Every tensor in a nested batch, in a stable order."""
    if isinstance(batch, torch.Tensor):
        return [batch]
    if isinstance(batch, dict):
        return [t for key in sorted(batch, key=str) for t in tensors(batch[key])]
    if isinstance(batch, (list, tuple)):
        return [t for item in batch for t in tensors(item)]
    return []


def structure(batch: Any) -> str:
    """A short description of a batch's shape: `dict[image: Tensor, label: Tensor]`, `list[Tensor,
    Tensor]`."""
    if isinstance(batch, torch.Tensor):
        return "Tensor"
    if isinstance(batch, dict):
        return "dict[%s]" % ", ".join("%s: %s" % (k, structure(v)) for k, v in sorted(batch.items(), key=str))
    if isinstance(batch, (list, tuple)):
        inner = ", ".join(structure(v) for v in batch[:8]) + (", ..." if len(batch) > 8 else "")
        return "%s[%s]" % (type(batch).__name__, inner)
    return type(batch).__name__


def roundtrip(device: Any, batch: Any) -> Dict[str, Any]:
    """A batch copied host -> device -> host must hash the same."""
    before = digest(batch)
    after = digest(to_device(to_device(batch, device), torch.device("cpu")))
    found = tensors(batch)
    return {
        "host": before,
        "after_device": after,
        "equal": before == after,
        "structure": structure(batch),
        "tensors": len(found),
        "bytes": sum(int(t.numel() * t.element_size()) for t in found),
    }


class Clock:
    """Marks on the device's timeline: CUDA events on a GPU, perf_counter on the CPU."""

    def __init__(self, device: Any) -> None:
        self.cuda = torch.device(device).type == "cuda"

    def mark(self) -> Any:
        if not self.cuda:
            return time.perf_counter()
        event = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        event.record()
        return event

    def ms(self, start: Any, end: Any) -> float:
        """Milliseconds between two marks (waits for the device on CUDA)."""
        if not self.cuda:
            return (float(end) - float(start)) * 1000.0
        end.synchronize()
        return float(start.elapsed_time(end))

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()


def _median(values: List[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _timed_copies(clock: Clock, dst: Any, src: Any, reps: int) -> float:
    """Median milliseconds of one copy after a warm-up copy."""
    dst.copy_(src, non_blocking=True)
    clock.sync()
    times = []
    for _ in range(reps):
        start = clock.mark()
        dst.copy_(src, non_blocking=True)
        times.append(clock.ms(start, clock.mark()))
    return _median(times)


def _gbps(nbytes: int, millis: float) -> Optional[float]:
    return round(nbytes / (millis / 1000.0) / 1e9, 3) if millis > 0 else None


def bandwidth(device: Any, nbytes: int = COPY_BYTES, reps: int = REPS) -> Dict[str, Any]:
    """Pageable and pinned host-to-device GB/s, plus the PCIe link read by NVML while pinned copies still
    run."""
    device = torch.device(device)
    clock = Clock(device)
    cuda = device.type == "cuda"
    nvml = nvml_open(device) if cuda else None  # nvmlInit can take longer than a burst of copies: first
    dst = torch.empty(nbytes, dtype=torch.uint8, device=device)
    pageable = torch.empty(nbytes, dtype=torch.uint8).fill_(1)
    result: Dict[str, Any] = {"bytes": nbytes, "reps": reps}
    result["pageable_gbps"] = _gbps(nbytes, _timed_copies(clock, dst, pageable, reps))
    if not cuda:
        result.update(
            pinned_gbps=None,
            pinned_reason="pinned memory needs CUDA",
            link={"available": False, "reason": "not a CUDA device"},
        )
        return result
    pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True).fill_(1)
    result["pinned_gbps"] = _gbps(nbytes, _timed_copies(clock, dst, pinned, reps))
    result["link"] = _link_under_load(nvml, dst, pinned, result["pinned_gbps"])
    del pageable, pinned, dst
    return result


def _link_under_load(nvml: Any, dst: Any, src: Any, gbps: Optional[float]) -> Dict[str, Any]:
    """Queue >= LINK_LOAD_S of pinned copies, read the link halfway through, then wait for them."""
    per_copy_s = src.numel() / ((gbps or 10.0) * 1e9)
    copies = max(4, int(LINK_LOAD_S / max(per_copy_s, 1e-6)))
    for _ in range(copies):
        dst.copy_(src, non_blocking=True)
    time.sleep(min(LINK_LOAD_S / 2, 0.5))
    link = nvml_link(nvml)
    link["copies_queued"] = copies
    torch.cuda.synchronize()
    return link


def nvml_open(device: Any) -> Any:
    """(pynvml, handle) for this CUDA device, or a dict saying why NVML is not there."""
    try:
        import pynvml
    except ImportError:
        return {"available": False, "reason": "nvidia-ml-py is not installed in this environment"}
    try:
        pynvml.nvmlInit()
        return pynvml, _nvml_handle(pynvml, device)
    except Exception as exc:  # NVMLError and friends: report, never crash the smoke test
        return {"available": False, "reason": "%s: %s" % (type(exc).__name__, exc)}


def nvml_link(opened: Any) -> Dict[str, Any]:
    """PCIe generation and width now and at most."""
    if isinstance(opened, dict):
        return dict(opened)
    pynvml, handle = opened
    try:
        return {
            "available": True,
            "gen": int(pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)),
            "width": int(pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)),
            "max_gen": int(pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle)),
            "max_width": int(pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle)),
        }
    except Exception as exc:
        return {"available": False, "reason": "%s: %s" % (type(exc).__name__, exc)}


def _nvml_handle(pynvml: Any, device: Any) -> Any:
    """The NVML handle of the device CUDA calls `device` (CUDA order and CUDA_VISIBLE_DEVICES, via its UUID);
    a MIG instance resolves to its parent GPU, which owns the PCIe link."""
    props = torch.cuda.get_device_properties(device)
    uuid = getattr(props, "uuid", None)
    if uuid is not None:
        text = str(uuid)
        handle = pynvml.nvmlDeviceGetHandleByUUID(
            text if text.startswith(("GPU-", "MIG-")) else "GPU-" + text
        )
        try:
            if pynvml.nvmlDeviceIsMigDeviceHandle(handle):
                handle = pynvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle)
        except Exception:  # older drivers: no MIG queries
            pass
        return handle
    bus = getattr(props, "pci_bus_id", None)
    if bus is not None:
        domain, dev = getattr(props, "pci_domain_id", 0), getattr(props, "pci_device_id", 0)
        return pynvml.nvmlDeviceGetHandleByPciBusId("%08x:%02x:%02x.0" % (domain, bus, dev))
    raise RuntimeError("cannot tell which NVML device CUDA device %s is" % device)


def _fake_step(device: Any, clock: Clock, step_ms: float, size: int) -> Tuple[Any, int]:
    """A matmul repeated to take about `step_ms` here, calibrated after warm-up steps; (matrix,
    repetitions)."""
    matrix = torch.randn(size, size, device=device)
    for _ in range(WARMUP_STEPS):  # cuBLAS handles and lazy module loading land here, not in the timing
        matrix = (matrix @ matrix).tanh_()
    clock.sync()
    start = clock.mark()
    for _ in range(10):
        matrix = (matrix @ matrix).tanh_()
    per = max(clock.ms(start, clock.mark()) / 10.0, 1e-3)
    return matrix, max(1, round(step_ms / per))


def idle_fraction(
    device: Any,
    dataset: Any,
    *,
    workers: int,
    pin_memory: bool,
    batch_size: int,
    batches: int,
    step_ms: float,
    collate: Optional[Callable[..., Any]] = None,
) -> Dict[str, Any]:
    """Fraction of the device timeline spent waiting for data while a fake step consumes loader batches.

    The first max(2, workers) batches are warm-up (worker start-up, the first-batch lag) and are not timed."""
    device = torch.device(device)
    clock = Clock(device)
    matrix, reps = _fake_step(device, clock, step_ms, 1024 if device.type == "cuda" else 128)
    warmup = max(2, workers)
    loader = DataLoader(
        dataset, batch_size=batch_size, num_workers=workers, pin_memory=pin_memory, collate_fn=collate
    )
    marks: List[Tuple[Any, Any]] = []
    for position, batch in enumerate(loader):
        if position >= warmup + batches:
            break
        start = clock.mark()
        moved = tensors(to_device(batch, device, non_blocking=pin_memory))
        floating = [t for t in moved if t.is_floating_point()]
        if floating:  # the step depends on the batch, as training would
            matrix = matrix + floating[0].float().mean() * 0
        for _ in range(reps):
            matrix = (matrix @ matrix).tanh_()
        if position >= warmup:
            marks.append((start, clock.mark()))
    clock.sync()
    del loader
    busy = sum(clock.ms(s, e) for s, e in marks)
    span = clock.ms(marks[0][0], marks[-1][1]) if marks else 0.0
    return {
        "workers": workers,
        "pin_memory": pin_memory,
        "warmup_batches": warmup,
        "batches": len(marks),
        "step_ms": step_ms,
        "busy_ms": round(busy, 3),
        "span_ms": round(span, 3),
        "idle_fraction": round(min(1.0, max(0.0, 1.0 - busy / span)), 4) if span > 0 else None,
    }


def describe(device: Any) -> Dict[str, Any]:
    """Name, capability and memory of a CUDA device; the CPU's name otherwise."""
    device = torch.device(device)
    if device.type != "cuda":
        import platform

        return {"device": "cpu", "name": platform.processor() or platform.machine()}
    props = torch.cuda.get_device_properties(device)
    return {
        "device": "cuda",
        "name": props.name,
        "capability": "sm_%d%d" % (props.major, props.minor),
        "memory_bytes": int(props.total_memory),
        "arch_list": list(torch.cuda.get_arch_list()),
        "uuid": str(getattr(props, "uuid", "") or ""),
    }


def run(
    device_name: str,
    sample_batch: Any,
    settings: Dict[str, Any],
    deadline: float,
    make_dataset: Callable[[int], Any],
    collate: Optional[Callable[..., Any]] = None,
) -> Dict[str, Any]:
    """All GPU measurements that fit before `deadline`; `make_dataset(n)` gives the loader's dataset."""
    device = torch.device(device_name)
    result = describe(device)
    result["roundtrip"] = roundtrip(device, sample_batch)
    result["h2d"] = bandwidth(device, int(settings.get("copy_bytes") or COPY_BYTES))
    batch_size, per_sample_s = int(settings["batch_size"]), float(settings["per_sample_ms"]) / 1000.0
    most = max(1, int(settings["max_workers"]))
    step_ms = float(settings.get("step_ms") or 0.0) or 1000.0 * batch_size * per_sample_s / most
    result["idle"] = []
    for workers in sorted({0, most}):
        lanes = max(1, workers)
        batches = 4 * lanes
        needed = (max(2, workers) + batches) * batch_size * per_sample_s / lanes + 1.0
        if time.perf_counter() + needed > deadline:
            result.setdefault("idle_skipped", []).append(workers)
            continue
        dataset = make_dataset((max(2, workers) + batches + 2 * lanes) * batch_size)
        measured = idle_fraction(
            device,
            dataset,
            workers=workers,
            pin_memory=device.type == "cuda",
            batch_size=batch_size,
            batches=batches,
            step_ms=step_ms,
            collate=collate,
        )
        result["idle"].append(measured)
    return result
