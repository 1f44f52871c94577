"""NVIDIA GPUs through NVML (nvidia-ml-py, imported lazily): driver, CUDA driver version, memory, load, PCIe
link.

No GPU is a normal answer, not an error: `read_nvml()` then says why (package missing, no driver, no device).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.version import install_line

# Theoretical PCIe bandwidth per lane and direction in GB/s (after line encoding), by generation.
PCIE_LANE_GBPS: dict[int, float] = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


@dataclass(frozen=True, slots=True)
class GpuInfo:
    index: int
    name: str
    capability: str | None
    memory_total: int | None
    memory_used: int | None
    utilization: int | None
    pcie_gen: int | None
    pcie_width: int | None
    pcie_max_gen: int | None
    pcie_max_width: int | None


@dataclass(frozen=True, slots=True)
class NvmlReport:
    """available is False when there is no NVML (reason says why); gpus may still be empty with a driver."""

    available: bool
    reason: str = ""
    driver: str | None = None
    cuda_driver: str | None = None
    gpus: tuple[GpuInfo, ...] = ()


def pcie_gbps(gen: int | None, width: int | None) -> float | None:
    """Theoretical one-direction PCIe bandwidth of a link, e.g. Gen4 x16 -> 31.5 GB/s."""
    if not gen or not width or gen not in PCIE_LANE_GBPS:
        return None
    return round(PCIE_LANE_GBPS[gen] * width, 2)


def cuda_version_text(value: int) -> str:
    """NVML's 12040 -> '12.4'."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _try(function: Any, *args: Any) -> Any:
    try:
        return function(*args)
    except Exception:  # an unsupported query (NVMLError_NotSupported) leaves that field unknown
        return None


def _gpu(pynvml: Any, index: int) -> GpuInfo:
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    memory = _try(pynvml.nvmlDeviceGetMemoryInfo, handle)
    load = _try(pynvml.nvmlDeviceGetUtilizationRates, handle)
    capability = _try(pynvml.nvmlDeviceGetCudaComputeCapability, handle)
    return GpuInfo(
        index=index,
        name=_text(pynvml.nvmlDeviceGetName(handle)),
        capability=f"sm_{capability[0]}{capability[1]}" if capability else None,
        memory_total=int(memory.total) if memory else None,
        memory_used=int(memory.used) if memory else None,
        utilization=int(load.gpu) if load else None,
        pcie_gen=_try(pynvml.nvmlDeviceGetCurrPcieLinkGeneration, handle),
        pcie_width=_try(pynvml.nvmlDeviceGetCurrPcieLinkWidth, handle),
        pcie_max_gen=_try(pynvml.nvmlDeviceGetMaxPcieLinkGeneration, handle),
        pcie_max_width=_try(pynvml.nvmlDeviceGetMaxPcieLinkWidth, handle),
    )


def read_nvml() -> NvmlReport:
    """Everything NVML says about this machine's GPUs, or why it cannot say anything."""
    try:
        import pynvml
    except ImportError:
        return NvmlReport(available=False, reason=f"nvidia-ml-py is not installed ({install_line('gpu')})")
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound / DriverNotLoaded: no NVIDIA driver here
        return NvmlReport(available=False, reason=f"no NVIDIA driver ({_text(exc) or type(exc).__name__})")
    try:
        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        cuda = _try(pynvml.nvmlSystemGetCudaDriverVersion_v2) or _try(pynvml.nvmlSystemGetCudaDriverVersion)
        count = int(pynvml.nvmlDeviceGetCount())
        gpus = tuple(_gpu(pynvml, i) for i in range(count))
    except Exception as exc:
        return NvmlReport(available=False, reason=f"NVML query failed ({_text(exc)})")
    finally:
        _try(pynvml.nvmlShutdown)
    return NvmlReport(
        available=True, driver=driver, cuda_driver=cuda_version_text(int(cuda)) if cuda else None, gpus=gpus
    )


PROC_NVIDIA = Path("/proc/driver/nvidia")
DEV = Path("/dev")


@dataclass(frozen=True, slots=True)
class DriverPresence:
    """NVIDIA GPUs seen without NVML: the kernel driver's /proc/driver/nvidia and the /dev/nvidiaN nodes."""

    devices: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    driver: str | None = None

    @property
    def count(self) -> int:
        return max(len(self.devices), len(self.models))

    def where(self) -> str:
        parts = []
        if self.models:
            parts.append(f"/proc/driver/nvidia/gpus ({', '.join(sorted(set(self.models)))})")
        if self.devices:
            parts.append(" ".join(f"/dev/{d}" for d in self.devices))
        return "; ".join(parts)


def driver_presence(proc: Path = PROC_NVIDIA, dev: Path = DEV) -> DriverPresence:
    """What the NVIDIA kernel driver exposes, read directly (no nvidia-ml-py needed)."""
    models: list[str] = []
    gpus = proc / "gpus"
    for info in sorted(gpus.glob("*/information")) if gpus.is_dir() else ():
        try:
            text = info.read_text(errors="replace")
        except OSError:
            continue
        found = re.search(r"^Model:\s*(.+)$", text, re.MULTILINE)
        models.append(found.group(1).strip() if found else info.parent.name)
    try:
        devices = sorted(
            (p.name for p in dev.iterdir() if re.fullmatch(r"nvidia\d+", p.name)), key=lambda n: int(n[6:])
        )
    except OSError:
        devices = []
    driver = None
    try:
        first = (proc / "version").read_text(errors="replace").splitlines()[0]
        version = re.search(r"\b(\d+\.\d+(?:\.\d+)?)\b", first)
        driver = version.group(1) if version else None
    except (OSError, IndexError):
        pass
    return DriverPresence(devices=tuple(devices), models=tuple(models), driver=driver)
