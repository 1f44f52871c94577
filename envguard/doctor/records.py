"""What doctor measured about the machine and the environment (its records), and the result it returns."""

from __future__ import annotations

from dataclasses import dataclass, field

from envguard.cuda import FamilyMember
from envguard.findings import Finding
from envguard.machine.coldread import Latency
from envguard.machine.disk import DiskInfo
from envguard.machine.gpu import DriverPresence, NvmlReport
from envguard.machine.host import CpuInfo, MemoryInfo, ShmInfo
from envguard.model import Fingerprints
from envguard.prefix.integrity import IntegrityReport
from envguard.smoke import WorkerAdvice


@dataclass(frozen=True, slots=True)
class TorchFamily:
    """torch and the torchvision/torchaudio beside it, and each one's import in the environment's
    interpreter: (module, '' when it imported, else the error's last line); `note` when unreadable."""

    members: tuple[FamilyMember, ...] = ()
    imports: tuple[tuple[str, str], ...] = ()
    note: str = ""
    prefix: str = ""


@dataclass(frozen=True, slots=True)
class FreeSpace:
    """Free space on the filesystem holding the environment, a package cache or the data."""

    what: str
    path: str
    free: int
    total: int


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
    integrity_unreadable: bool = False  # conda-meta could not be read (a corrupt record): the note names it
    presence: DriverPresence = field(
        default_factory=DriverPresence
    )  # GPUs the kernel driver shows, NVML or not
    ranks: int = 1  # training processes per node: LOCAL_WORLD_SIZE, else visible GPUs
    ranks_source: str = "one process"
    latency: Latency | None = None  # measured read latency of the data folder
    family: TorchFamily = field(default_factory=TorchFamily)
    space: tuple[FreeSpace, ...] = ()


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """`envguard doctor`'s result: the facts, the most num_workers loading that computes can use, the
    checklist, and with --loader the setting the input-pipeline model (smoke's and watch's) gives it."""

    facts: DoctorFacts
    recommended_workers: int
    findings: tuple[Finding, ...]
    loader: WorkerAdvice | None = None  # --loader: the input-pipeline model's setting for that loader
