"""Doctor verdicts for the host (pure): CPUs and num_workers, memory, /dev/shm, open files, data folder,
health."""

from __future__ import annotations

from envguard.doctor.facts import DoctorFacts
from envguard.doctor.gpu_rules import gpu_findings, torch_findings
from envguard.findings import Finding, Status
from envguard.machine.coldread import HDD_MS, Latency
from envguard.machine.disk import DiskInfo
from envguard.machine.host import CpuInfo, MemoryInfo, ShmInfo, recommended_workers, shm_needed
from envguard.output import human_bytes
from envguard.prefix.integrity import IntegrityReport

# What doctor assumes a batch is when it has not seen one: 32 images of 3x224x224 float32 (run smoke for
# yours).
ASSUMED_BATCH_BYTES = 32 * 3 * 224 * 224 * 4
MIN_OPEN_FILES = 4096
SHOWN_PROBLEMS = 5


def cpu_findings(cpus: CpuInfo, ranks: int = 1, ranks_source: str = "one process") -> list[Finding]:
    quota = "none" if cpus.quota is None else f"{cpus.quota:g} CPUs"
    evidence = (
        f"{cpus.logical} logical, {cpus.affinity} in this process's affinity, cgroup quota {quota}: "
        f"{cpus.usable} usable (affinity and quota, floored), {cpus.physical} physical cores"
    )
    out: list[Finding] = []
    if cpus.usable < cpus.logical:
        out.append(
            Finding(
                "cpu",
                "CPUs",
                "WARN",
                evidence + f"; os.cpu_count() says {cpus.logical}",
                f"size num_workers and thread pools by the {cpus.usable} usable CPUs, not os.cpu_count() "
                f"(torch.set_num_threads({cpus.usable}))",
            )
        )
    else:
        out.append(Finding("cpu", "CPUs", "PASS", evidence))
    workers = recommended_workers(cpus, ranks)
    share = cpus.usable // max(ranks, 1)
    out.append(
        Finding(
            "cpu",
            "recommended num_workers",
            "INFO",
            f"num_workers={workers} per rank = {cpus.usable} usable CPUs // {ranks} ranks ({ranks_source}) = "
            f"{share}, "
            "minus 1 for each rank's main process",
            f"start with DataLoader(num_workers={workers}, persistent_workers=True, pin_memory=True on GPU); "
            "I/O-bound data "
            "can use more workers than cores: measure with `envguard smoke`",
        )
    )
    return out


def memory_findings(memory: MemoryInfo) -> list[Finding]:
    limit = f", cgroup limit {human_bytes(memory.cgroup_limit)}" if memory.cgroup_limit else ""
    evidence = f"{human_bytes(memory.available)} available of {human_bytes(memory.total)}{limit}"
    ceiling = (
        min(x for x in (memory.available, memory.cgroup_limit) if x is not None) if memory.available else None
    )
    if ceiling is not None and ceiling < 4 * 1024**3:
        return [
            Finding(
                "memory",
                "RAM",
                "WARN",
                evidence,
                "each worker holds a copy of whatever the dataset object owns: keep it small (paths, not "
                "decoded data), lower num_workers, or give the job more memory",
            )
        ]
    return [Finding("memory", "RAM", "PASS", evidence)]


def shm_findings(shm: ShmInfo, workers: int) -> list[Finding]:
    if not shm.exists:
        return [
            Finding(
                "memory",
                "/dev/shm",
                "INFO",
                f"{shm.path} does not exist (not Linux?)",
                "nothing to do unless DataLoader workers crash with 'bus error'",
            )
        ]
    needed = shm_needed(ASSUMED_BATCH_BYTES, workers)
    evidence = (
        f"{human_bytes(shm.free)} free of {human_bytes(shm.total)} at {shm.path}; num_workers={workers} x 2 "
        f"prefetched batches of 32x3x224x224 float32 need {human_bytes(needed)}"
    )
    fix = (
        "give the container more shared memory: `docker run --shm-size=2g` (or --ipc=host); on Kubernetes "
        "mount an "
        "emptyDir with medium: Memory at /dev/shm; `envguard smoke` checks your real batch size"
    )
    if needed > shm.free:
        return [Finding("memory", "/dev/shm", "FAIL", evidence + ": workers will die with 'bus error'", fix)]
    if needed * 4 > shm.free:
        return [Finding("memory", "/dev/shm", "WARN", evidence + ": little headroom for larger batches", fix)]
    return [Finding("memory", "/dev/shm", "PASS", evidence)]


def open_files_findings(limits: tuple[int | None, int | None]) -> list[Finding]:
    soft, hard = limits
    evidence = f"ulimit -n: soft {soft or 'unlimited'}, hard {hard or 'unlimited'}"
    if soft is not None and soft < MIN_OPEN_FILES:
        target = MIN_OPEN_FILES * 16 if hard is None else min(hard, MIN_OPEN_FILES * 16)
        return [
            Finding(
                "cpu",
                "open files",
                "WARN",
                evidence + ": workers share tensors through file descriptors",
                f"raise it (`ulimit -n {target}`) or call "
                "torch.multiprocessing.set_sharing_strategy('file_system'); "
                "too few cause 'received 0 items of ancdata'",
            )
        ]
    return [Finding("cpu", "open files", "PASS", evidence)]


def disk_findings(disk: DiskInfo | None, shm: ShmInfo, latency: Latency | None = None) -> list[Finding]:
    """The data folder's storage, judged by measured read latency where there is one (the rotational flag lies
    on VMs: virtio disks often say 1)."""
    if disk is None:
        return [
            Finding("data", "data folder", "INFO", "not checked", "pass --data DIR to check your data's disk")
        ]
    size = f"{disk.files}{'+' if disk.truncated else ''} files, {human_bytes(disk.bytes)}"
    measured = latency is not None and latency.samples > 0
    slow = latency.median_ms >= HDD_MS if latency is not None and measured else disk.rotational
    if measured and latency is not None:
        heat = "cold" if latency.cold else "possibly cached"
        flag = {True: "1", False: "0", None: "unknown"}[disk.rotational]
        kind = (
            f"a {heat} 128 KiB read takes {latency.median_ms:g} ms (median of {latency.samples}; "
            f"rotational flag {flag}): {'HDD-like' if slow else 'SSD-like'}"
        )
    else:
        kind = {True: "rotational disk (HDD)", False: "SSD/NVMe", None: "disk type unknown"}[disk.rotational]
    evidence = (
        f"{disk.path}: {size} on {disk.fstype} ({disk.source or 'no device'}, mounted at "
        f"{disk.mount_point}), {kind}"
    )
    fits = shm.exists and not disk.in_memory and 0 < disk.bytes < shm.free // 2
    tip = f"; it fits in {shm.path}: copying it there (tmpfs) removes disk reads" if fits else ""
    if disk.files == 0:
        return [Finding("data", "data folder", "WARN", evidence, "the folder is empty: check the path")]
    if disk.network:
        return [
            Finding(
                "data",
                "data folder",
                "WARN",
                evidence + ": a network filesystem",
                "copy the data to local disk first, or use more workers (I/O-bound) and sharded formats"
                + tip,
            )
        ]
    if slow:
        return [
            Finding(
                "data",
                "data folder",
                "WARN",
                evidence + ": random reads are slow on this disk",
                "move it to an SSD, or store it sequentially (tar shards, WebDataset) and read in order"
                + tip,
            )
        ]
    status: Status = "INFO" if fits else "PASS"
    return [
        Finding(
            "data",
            "data folder",
            status,
            evidence + tip,
            "copy to tmpfs for I/O-bound training" if fits else "",
        )
    ]


CORRUPT_FIX = (
    "reinstall the package whose record is named (`conda install --force-reinstall -p PREFIX NAME`), or "
    "remove that file; then run envguard doctor again"
)


def health_findings(report: IntegrityReport | None, note: str, unreadable: bool = False) -> list[Finding]:
    """The environment's files against conda-meta; `unreadable`: its records could not be read (`note` names
    the file), which conda itself trips over too."""
    if report is None and unreadable:
        return [Finding("environment", "files", "FAIL", f"files not checked: {note}", CORRUPT_FIX)]
    if report is None:
        return [
            Finding(
                "environment", "files", "INFO", note or "not checked", "point SOURCE at a conda environment"
            )
        ]
    grouped = report.by_package()
    if not grouped:
        extra = (
            f"; {report.unverified} rewritten at install could not be verified" if report.unverified else ""
        )
        return [
            Finding(
                "environment",
                "files",
                "PASS",
                f"all {report.files} files of {report.packages} packages match conda-meta{extra}",
            )
        ]
    missing = sum(1 for p in report.problems if p.problem == "missing")
    altered = len(report.problems) - missing
    shown = "; ".join(
        f"{pkg}: {items[0].path} {items[0].problem}" + (f" (+{len(items) - 1})" if len(items) > 1 else "")
        for pkg, items in list(grouped.items())[:SHOWN_PROBLEMS]
    )
    names = " ".join(sorted({pkg.rsplit("-", 2)[0] for pkg in grouped}))
    return [
        Finding(
            "environment",
            "files",
            "FAIL",
            f"{len(grouped)} package(s) with {missing} missing and {altered} altered file(s): {shown}",
            f"reinstall them: `conda install --force-reinstall -p {report.prefix} {names}` "
            "(or recreate the environment from its lock)",
        )
    ]


def all_findings(facts: DoctorFacts) -> list[Finding]:
    """Every doctor finding in display order."""
    workers = recommended_workers(facts.cpus, facts.ranks)
    return [
        *gpu_findings(facts.nvml, facts.presence),
        *torch_findings(facts.torch, facts.torch_error, facts.nvml, facts.presence),
        *cpu_findings(facts.cpus, facts.ranks, facts.ranks_source),
        *open_files_findings(facts.open_files),
        *memory_findings(facts.memory),
        *shm_findings(facts.shm, workers),
        *disk_findings(facts.disk, facts.shm, facts.latency),
        *health_findings(facts.integrity, facts.integrity_note, facts.integrity_unreadable),
    ]
