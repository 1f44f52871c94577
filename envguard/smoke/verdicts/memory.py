"""Memory verdicts (pure): per-worker memory from the in-environment memory record (copy-on-read growth judged
on each worker's USS, the node projection from PSS with shared pages counted once), and /dev/shm against the
batches in flight, for the sweep's batches and for every worker of every local rank (issue 10)."""

from __future__ import annotations

from collections.abc import Sequence

from envguard.findings import Finding
from envguard.machine.host import ShmInfo, shm_needed
from envguard.output import human_bytes
from envguard.smoke.measured_pipeline import WorkerMemory
from envguard.smoke.report import DatasetResult

GROWTH_MIB = 8.0  # a worker growing less than this over the K indices is noise (its own heap settling)
PER_INDEX = 512  # bytes of USS growth per index read: a touched page per few samples is copy-on-read
MIB = 2**20
MIN_INDICES = 1000  # per worker: fewer reads touch too few pages to tell copy-on-read from noise
CATEGORY = "memory"
FLAT = "worker memory stays flat (copy-on-read)"
SHM = "/dev/shm holds every local rank's batches in flight"
COPY_ON_READ_FIX = (
    "keep large per-sample tables out of Python lists/dicts: a numpy array "
    "(np.array(paths, dtype=np.bytes_)), an Arrow table or one bytes blob with offsets; or load the "
    "index per worker in worker_init_fn (pytorch#13246)"
)
NODE_FIX = "fewer workers per rank or fewer local ranks, or keep less of the dataset in each process"
RANKS_SHM_FIX = (
    "give the container a larger /dev/shm (docker run --shm-size=8g, or a memory-backed emptyDir on "
    "Kubernetes), or lower num_workers x prefetch_factor or the batch size"
)
SHM_FIX = (
    "give the container more shared memory: `docker run --shm-size=2g` (or --ipc=host); on Kubernetes mount "
    "an "
    "emptyDir with medium: Memory at /dev/shm; or lower batch_size, num_workers or prefetch_factor"
)


def _shared(record: WorkerMemory) -> int:
    """Bytes of pages shared between the parent and its workers, counted once: the sum of the processes'
    PSS minus the sum of their USS (PSS splits each shared page among its sharers)."""
    snapshots = [record.parent_end, *record.end.values()]
    pss = sum(s.pss for s in snapshots if s)
    uss = sum(s.uss for s in snapshots if s)
    return max(0, pss - uss)


def _node(record: WorkerMemory, worker_bytes: float, workers: int, ranks: int) -> tuple[float, str]:
    """(bytes, the sum in words) of the node: per rank the parent's own pages, the shared pages once and
    `workers` workers of `worker_bytes` each."""
    usage = record.parent_end or record.parent
    parent = usage.uss if usage else 0
    shared = _shared(record)
    total = ranks * (parent + shared + workers * worker_bytes)
    words = (
        f"{ranks} local ranks x (parent {parent / MIB:.0f} MiB + {shared / MIB:.0f} MiB shared, counted "
        f"once by PSS + {workers} workers x {worker_bytes / MIB:.0f} MiB) = {total / 2**30:.1f} GiB"
    )
    return total, words


def _pss(record: WorkerMemory, pid: str) -> str:
    first, last = record.start.get(pid), record.end.get(pid)
    start, end = (first.pss if first else 0), (last.pss if last else 0)
    return f", PSS {start / MIB:.0f} -> {end / MIB:.0f} MiB" if start and end else ""


def worker_memory(
    record: WorkerMemory | None, available: int | None, workers: int, ranks: int
) -> list[Finding]:
    """Copy-on-read: each worker's USS growth over K random indices, projected to an epoch for `workers` per
    rank x `ranks` local ranks, with the shared pages counted once (PSS), against the available RAM."""
    if record is None:
        return []
    grown = [
        (pid, first.uss, last.uss)
        for pid, first in record.start.items()
        if first and (last := record.end.get(pid))
    ]
    if not grown:
        return [
            Finding(CATEGORY, FLAT, "INFO", "the workers' memory could not be read (/proc/PID/smaps_rollup)")
        ]
    pid, before, after = max(grown, key=lambda g: g[2] - g[1])
    per_worker = max(1, record.indices // max(1, record.workers or 1))
    growth = max(0, after - before)
    where = (
        f"each of {record.workers} workers read ~{per_worker} random indices: USS "
        f"{before / MIB:.0f} -> {after / MIB:.0f} MiB{_pss(record, pid)} (the most grown worker)"
    )
    room = f" against {available / 2**30:.1f} GiB available" if available else ""
    if per_worker < MIN_INDICES:
        return [Finding(CATEGORY, FLAT, "INFO", f"{where}: too few samples to show copy-on-read growth")]
    if growth < GROWTH_MIB * MIB or growth / per_worker < PER_INDEX:
        total, words = _node(record, after, workers, ranks)
        if available and total > available:
            return [
                Finding(
                    CATEGORY,
                    FLAT,
                    "WARN",
                    f"{where}; no copy-on-read growth, but the node needs {words}{room}",
                    NODE_FIX,
                )
            ]
        return [Finding(CATEGORY, FLAT, "PASS", f"{where}; no copy-on-read growth; node: {words}{room}")]
    return [_growing(record, where, room, before, growth, per_worker, available, workers, ranks)]


def _growing(
    record: WorkerMemory,
    where: str,
    room: str,
    before: int,
    growth: int,
    per_worker: int,
    available: int | None,
    workers: int,
    ranks: int,
) -> Finding:
    parent = record.parent.uss if record.parent else 0
    length = record.length
    epoch = min(growth / per_worker * length / max(workers, 1), parent or float("inf"))
    total, words = _node(record, before + epoch, workers, ranks)
    over = (
        " (more than is available: the node will run out of memory)"
        if available and total > available
        else ""
    )
    named = ", ".join(
        f"{c.name} ({c.container} of {c.length:,} {'/'.join(c.items)})" for c in record.culprits
    )
    evidence = (
        f"{where}: {growth / per_worker / 1024:.1f} KiB per index read, as the objects' refcounts copy "
        f"the parent's pages (parent {parent / MIB:.0f} MiB); over an epoch each worker grows up to "
        f"{(before + epoch) / MIB:.0f} MiB: {workers} workers x {ranks} local ranks, node {words}{room}{over}"
        + (f"; likely culprit: {named}" if named else "")
    )
    return Finding(CATEGORY, FLAT, "WARN", evidence, COPY_ON_READ_FIX)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def shm_in_flight(
    record: WorkerMemory | None, shm: ShmInfo, workers: int, ranks: int, batch_size: int, prefetch: int
) -> list[Finding]:
    """Every local rank's workers keep prefetch_factor batches each in /dev/shm: ranks x workers x
    prefetch_factor x the batch's bytes (measured per sample) against what /dev/shm has free."""
    sample = record.sample_bytes if record else 0
    if record is None or not sample or not shm.exists or workers == 0:
        return []
    batch = sample * batch_size
    needed = ranks * workers * prefetch * batch
    evidence = (
        f"{_count(ranks, 'local rank')} x {_count(workers, 'worker')} x prefetch_factor {prefetch} x "
        f"{human_bytes(batch)} "
        f"batches ({batch_size} samples of {human_bytes(sample)}) = {human_bytes(needed)} in flight; "
        f"{shm.path} has {human_bytes(shm.free)} free of {human_bytes(shm.total)}"
    )
    if needed > shm.free:
        return [
            Finding(CATEGORY, SHM, "FAIL", evidence + ": workers will die with 'bus error'", RANKS_SHM_FIX)
        ]
    if needed * 2 > shm.free:
        return [Finding(CATEGORY, SHM, "WARN", evidence + ": less than 2x headroom", RANKS_SHM_FIX)]
    return [Finding(CATEGORY, SHM, "PASS", evidence)]


def shm(info: ShmInfo, datasets: Sequence[DatasetResult], workers: int, prefetch_factor: int = 2) -> Finding:
    """Whether /dev/shm holds the sweep's batches in flight (workers x prefetch_factor of the largest)."""
    sizes = [d.batch_bytes for d in datasets if d.batch_bytes]
    if not info.exists:
        return Finding(
            "host",
            "/dev/shm",
            "INFO",
            f"{info.path} does not exist (not Linux?)",
            "nothing to do unless workers crash with 'bus error'",
        )
    if not sizes or workers == 0:
        return Finding(
            "host", "/dev/shm", "PASS", f"{human_bytes(info.free)} free; no batches cross it (num_workers=0)"
        )
    batch = max(sizes)
    needed = shm_needed(batch, workers, prefetch_factor)
    evidence = (
        f"num_workers={workers} x prefetch_factor {prefetch_factor} x {human_bytes(batch)} batches = "
        f"{human_bytes(needed)} in flight; {info.path} has {human_bytes(info.free)} free of "
        f"{human_bytes(info.total)}"
    )
    if needed > info.free:
        return Finding("host", "/dev/shm", "FAIL", evidence + ": workers will die with 'bus error'", SHM_FIX)
    if needed * 2 > info.free:
        return Finding("host", "/dev/shm", "WARN", evidence + ": less than 2x headroom", SHM_FIX)
    return Finding("host", "/dev/shm", "PASS", evidence)
