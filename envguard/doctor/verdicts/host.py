"""Doctor's verdicts on the host (pure): CPUs and num_workers, open files, memory, /dev/shm."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.machine.host import CpuInfo, MemoryInfo, ShmInfo, shm_needed
from envguard.output import human_bytes
from envguard.pipeline import most_workers

# What doctor assumes a batch is when it has not seen one: 32 images of 3x224x224 float32 (run smoke for
# yours).
ASSUMED_BATCH_BYTES = 32 * 3 * 224 * 224 * 4
MIN_OPEN_FILES = 4096


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
    workers = most_workers(cpus.usable, ranks)
    share = cpus.usable // max(ranks, 1)
    out.append(
        Finding(
            "cpu",
            "num_workers",
            "INFO",
            f"at most num_workers={workers} per rank for loading that computes = {cpus.usable} usable CPUs "
            f"// {ranks} ranks ({ranks_source}) = {share}, minus 1 for each rank's main process: the cores "
            "bound of the input-pipeline model; loading that waits (I/O, sleep) can use more, and a CPU "
            "training step that keeps every core busy leaves no room for any (a ceiling, not the setting: "
            "the setting needs your pipeline's costs)",
            "the setting for your pipeline comes from the same model with its measured costs: "
            "`envguard doctor --loader train.py:make_loader` (add --step-ms, --step-cores and --step-threads "
            "from watch), "
            "`envguard watch -- python train.py` or `envguard smoke ENV --loader train.py:make_loader`; "
            "pin_memory=True only with a GPU",
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
