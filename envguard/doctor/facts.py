"""What doctor measured about the machine and the environment (the input of its rules)."""

from __future__ import annotations

from dataclasses import dataclass

from envguard.doctor.disk import DiskInfo
from envguard.doctor.gpu import NvmlReport
from envguard.doctor.host import CpuInfo, MemoryInfo, ShmInfo
from envguard.integrity import IntegrityReport
from envguard.model import Fingerprints


@dataclass(frozen=True, slots=True)
class DoctorFacts:
    """Everything doctor measured; `torch` is None when the environment's interpreter was not probed."""

    environment: str
    cpus: CpuInfo
    memory: MemoryInfo
    shm: ShmInfo
    open_files: tuple[int | None, int | None]
    nvml: NvmlReport
    torch: Fingerprints | None = None
    torch_error: str = ""
    disk: DiskInfo | None = None
    integrity: IntegrityReport | None = None
    integrity_note: str = ""
