"""Host facts for data loading: CPUs (affinity, cgroup quota, physical cores), memory, /dev/shm, open-file
limit.

Each reader takes the paths it reads as parameters (defaulting to the real /proc and /sys) so a test can point
it at a crafted cgroup tree; nothing here is faked, it is the same parsing code either way.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
SYS_CPU = Path("/sys/devices/system/cpu")
MEMINFO = Path("/proc/meminfo")
SHM_ENV = "ENVGUARD_SHM_PATH"
DEFAULT_SHM = Path("/dev/shm")


@dataclass(frozen=True, slots=True)
class CpuInfo:
    """logical: CPUs in the machine; affinity: CPUs this process may run on; quota: cgroup CPU limit."""

    logical: int
    affinity: int
    physical: int
    quota: float | None
    usable: int


@dataclass(frozen=True, slots=True)
class MemoryInfo:
    total: int | None
    available: int | None
    cgroup_limit: int | None


@dataclass(frozen=True, slots=True)
class ShmInfo:
    path: str
    exists: bool
    total: int = 0
    free: int = 0


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cgroup_paths(proc_cgroup: Path) -> dict[str, str]:
    """controller -> cgroup path from /proc/self/cgroup ('' is the cgroup v2 unified hierarchy)."""
    paths: dict[str, str] = {}
    for line in (_read(proc_cgroup) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                paths[controller] = parts[2]
    return paths


def _ancestors(root: Path, relative: str) -> list[Path]:
    """root/a/b/c, root/a/b, root/a, root: every level whose limit applies to this process."""
    parts = [p for p in relative.split("/") if p]
    return [root.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]


def cgroup_cpu_quota(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """CPUs allowed by the cgroup (cpu.max in v2, cfs_quota/period in v1), or None when unlimited."""
    paths = _cgroup_paths(proc_cgroup)
    limits: list[float] = []
    for folder in _ancestors(root, paths.get("", "/")):
        fields = (_read(folder / "cpu.max") or "").split()
        if len(fields) == 2 and fields[0] != "max" and fields[1].isdigit() and int(fields[1]) > 0:
            limits.append(int(fields[0]) / int(fields[1]))
    for base in (root / "cpu,cpuacct", root / "cpu"):
        for folder in _ancestors(base, paths.get("cpu", "/")):
            quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
            if (
                quota
                and period
                and quota.lstrip("-").isdigit()
                and period.isdigit()
                and int(quota) > 0 < int(period)
            ):
                limits.append(int(quota) / int(period))
    return min(limits) if limits else None


def affinity() -> set[int]:
    """CPUs this process may run on (sched_getaffinity where the platform has it)."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is not None:
        return set(getter(0))
    return set(range(os.cpu_count() or 1))


def physical_cores(cpus: set[int], sys_cpu: Path = SYS_CPU) -> int:
    """Distinct (package, core) pairs among `cpus`; psutil or the CPU count where sysfs has no topology."""
    cores: set[tuple[str, str]] = set()
    for cpu in cpus:
        topology = sys_cpu / f"cpu{cpu}" / "topology"
        core, package = _read(topology / "core_id"), _read(topology / "physical_package_id")
        if core is None or package is None:
            return _psutil_physical(len(cpus))
        cores.add((package, core))
    return len(cores) or len(cpus)


def _psutil_physical(fallback: int) -> int:
    try:
        import psutil
    except ImportError:
        return fallback
    counted = psutil.cpu_count(logical=False)
    return min(int(counted), fallback) if counted else fallback


def cpu_info(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP, sys_cpu: Path = SYS_CPU) -> CpuInfo:
    """Logical, affinity, physical and usable CPUs; usable = affinity capped by the cgroup quota."""
    cpus = affinity()
    quota = cgroup_cpu_quota(root, proc_cgroup)
    # a 1.5-CPU quota runs 1.5 CPUs' worth of work: one whole CPU per process, floor not ceil
    usable = len(cpus) if quota is None else max(1, min(len(cpus), math.floor(quota)))
    physical = physical_cores(cpus, sys_cpu)
    return CpuInfo(
        logical=os.cpu_count() or len(cpus),
        affinity=len(cpus),
        physical=min(physical, usable),
        quota=quota,
        usable=usable,
    )


def memory_info(
    meminfo: Path = MEMINFO, root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP
) -> MemoryInfo:
    """Total and available RAM from /proc/meminfo, and the cgroup memory limit when one is set."""
    values: dict[str, int] = {}
    for line in (_read(meminfo) or "").splitlines():
        name, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            values[name] = int(fields[0]) * 1024
    paths = _cgroup_paths(proc_cgroup)
    limits: list[int] = []
    for folder in _ancestors(root, paths.get("", "/")):
        text = _read(folder / "memory.max")
        if text and text.isdigit():
            limits.append(int(text))
    for folder in _ancestors(root / "memory", paths.get("memory", "/")):
        text = _read(folder / "memory.limit_in_bytes")
        if text and text.isdigit() and int(text) < 2**60:  # v1 writes ~2**63 for "no limit"
            limits.append(int(text))
    return MemoryInfo(
        total=values.get("MemTotal"),
        available=values.get("MemAvailable"),
        cgroup_limit=min(limits) if limits else None,
    )


def oom_kills(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int | None:
    """Processes the OOM killer has ended in this process's memory cgroup and those above it (the `oom_kill`
    line of memory.events in v2, of memory.oom_control in v1), summed; None where no level says. Read before
    and after a run, a rise means one of its processes (or a neighbour's) was killed for memory."""
    paths = _cgroup_paths(proc_cgroup)
    levels = [folder / "memory.events" for folder in _ancestors(root, paths.get("", "/"))]
    v1 = _ancestors(root / "memory", paths.get("memory", "/"))
    levels += [folder / "memory.oom_control" for folder in v1]
    counts: list[int] = []
    for path in levels:
        for line in (_read(path) or "").splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill" and value.strip().isdigit():
                counts.append(int(value))
    return sum(counts) if counts else None


def shm_path() -> Path:
    """Where DataLoader workers put shared tensors: /dev/shm, or ENVGUARD_SHM_PATH to check another mount."""
    override = os.environ.get(SHM_ENV)
    return Path(override) if override else DEFAULT_SHM


def shm_info(path: Path | None = None) -> ShmInfo:
    """Size and free space of the shared-memory filesystem, measured with statvfs."""
    target = path or shm_path()
    try:
        stats = os.statvfs(target)
    except OSError:
        return ShmInfo(path=str(target), exists=False)
    return ShmInfo(
        path=str(target),
        exists=True,
        total=stats.f_blocks * stats.f_frsize,
        free=stats.f_bavail * stats.f_frsize,
    )


def open_files_limit() -> tuple[int | None, int | None]:
    """(soft, hard) RLIMIT_NOFILE; None for unlimited or where the platform has no such limit."""
    try:
        import resource
    except ImportError:
        return None, None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    infinity = resource.RLIM_INFINITY
    return (None if soft == infinity else soft), (None if hard == infinity else hard)


def ranks_per_node(environ: Mapping[str, str], visible_gpus: int) -> tuple[int, str]:
    """(training processes sharing this machine, where that number comes from): LOCAL_WORLD_SIZE as torchrun
    and Lightning set it, else one rank per visible GPU, else 1."""
    text = environ.get("LOCAL_WORLD_SIZE", "").strip()
    if text.isdigit() and int(text) > 0:
        return int(text), "LOCAL_WORLD_SIZE"
    if visible_gpus > 1:
        return visible_gpus, "one rank per visible GPU"
    return 1, "one process"


def visible_gpu_count(environ: Mapping[str, str], present: int) -> int:
    """GPUs CUDA will show: CUDA_VISIBLE_DEVICES' entries (indices, UUIDs or MIG UUIDs) up to the first
    invalid one ('-1' hides everything after it) when set, else all that are present."""
    text = environ.get("CUDA_VISIBLE_DEVICES")
    if text is None:
        return present
    entries: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part or part == "-1":
            break
        entries.append(part)
    return min(len(entries), present) if present else len(entries)


def shm_needed(batch_bytes: int, workers: int, prefetch_factor: int = 2) -> int:
    """Shared memory held by batches in flight: each worker keeps `prefetch_factor` batches ready."""
    return batch_bytes * max(workers, 0) * prefetch_factor
