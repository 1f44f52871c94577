"""Verdicts on per-worker memory (pure, over the in-environment memory record): copy-on-read growth judged on
each worker's USS, the node projection from PSS (shared pages counted once), and /dev/shm against the batches
in flight of every worker of every local rank (issue 10)."""

from __future__ import annotations

from typing import Any

from envguard.findings import Finding
from envguard.machine.host import ShmInfo
from envguard.output import human_bytes

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
SHM_FIX = (
    "give the container a larger /dev/shm (docker run --shm-size=8g, or a memory-backed emptyDir on "
    "Kubernetes), or lower num_workers x prefetch_factor or the batch size"
)


def _shared(record: dict[str, Any]) -> int:
    """Bytes of pages shared between the parent and its workers, counted once: the sum of the processes'
    PSS minus the sum of their USS (PSS splits each shared page among its sharers)."""
    snapshots = [record.get("parent_end") or {}, *(record.get("end") or {}).values()]
    pss = sum(int((s or {}).get("pss") or 0) for s in snapshots)
    uss = sum(int((s or {}).get("uss") or 0) for s in snapshots)
    return max(0, pss - uss)


def _node(record: dict[str, Any], worker_bytes: float, workers: int, ranks: int) -> tuple[float, str]:
    """(bytes, the sum in words) of the node: per rank the parent's own pages, the shared pages once and
    `workers` workers of `worker_bytes` each."""
    parent = int((record.get("parent_end") or record.get("parent") or {}).get("uss") or 0)
    shared = _shared(record)
    total = ranks * (parent + shared + workers * worker_bytes)
    words = (
        f"{ranks} local ranks x (parent {parent / MIB:.0f} MiB + {shared / MIB:.0f} MiB shared, counted "
        f"once by PSS + {workers} workers x {worker_bytes / MIB:.0f} MiB) = {total / 2**30:.1f} GiB"
    )
    return total, words


def _pss(record: dict[str, Any], pid: str) -> str:
    start = ((record.get("start") or {}).get(pid) or {}).get("pss")
    end = ((record.get("end") or {}).get(pid) or {}).get("pss")
    return f", PSS {int(start) / MIB:.0f} -> {int(end) / MIB:.0f} MiB" if start and end else ""


def worker_memory(
    record: dict[str, Any] | None, available: int | None, workers: int, ranks: int
) -> list[Finding]:
    """Copy-on-read: each worker's USS growth over K random indices, projected to an epoch for `workers` per
    rank x `ranks` local ranks, with the shared pages counted once (PSS), against the available RAM."""
    if not record:
        return []
    start, end = record.get("start") or {}, record.get("end") or {}
    grown = [
        (pid, start[pid]["uss"], end[pid]["uss"]) for pid in start if start[pid] and (end.get(pid) or {})
    ]
    if not grown:
        return [
            Finding(CATEGORY, FLAT, "INFO", "the workers' memory could not be read (/proc/PID/smaps_rollup)")
        ]
    pid, before, after = max(grown, key=lambda g: g[2] - g[1])
    per_worker = max(1, int(record.get("indices") or 0) // max(1, int(record.get("workers") or 1)))
    growth = max(0, after - before)
    where = (
        f"each of {record.get('workers')} workers read ~{per_worker} random indices: USS "
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
    record: dict[str, Any],
    where: str,
    room: str,
    before: int,
    growth: int,
    per_worker: int,
    available: int | None,
    workers: int,
    ranks: int,
) -> Finding:
    parent = int((record.get("parent") or {}).get("uss") or 0)
    length = int(record.get("length") or 0)
    epoch = min(growth / per_worker * length / max(workers, 1), parent or float("inf"))
    total, words = _node(record, before + epoch, workers, ranks)
    over = (
        " (more than is available: the node will run out of memory)"
        if available and total > available
        else ""
    )
    named = ", ".join(
        f"{c['name']} ({c['container']} of {c['length']:,} {'/'.join(c['items'])})"
        for c in record.get("culprits") or ()
    )
    evidence = (
        f"{where}: {growth / per_worker / 1024:.1f} KiB per index read, as the objects' refcounts copy "
        f"the parent's pages (parent {parent / MIB:.0f} MiB); over an epoch each worker grows up to "
        f"{(before + epoch) / MIB:.0f} MiB: {workers} workers x {ranks} local ranks, node {words}{room}{over}"
        + (f"; likely culprit: {named}" if named else "")
    )
    return Finding(CATEGORY, FLAT, "WARN", evidence, COPY_ON_READ_FIX)


def shm_in_flight(
    record: dict[str, Any] | None, shm: ShmInfo, workers: int, ranks: int, batch_size: int, prefetch: int
) -> list[Finding]:
    """Every local rank's workers keep prefetch_factor batches each in /dev/shm: ranks x workers x
    prefetch_factor x the batch's bytes (measured per sample) against what /dev/shm has free."""
    sample = int((record or {}).get("sample_bytes") or 0)
    if not record or not sample or not shm.exists or workers == 0:
        return []
    batch = sample * batch_size
    needed = ranks * workers * prefetch * batch
    evidence = (
        f"{ranks} local ranks x {workers} workers x prefetch_factor {prefetch} x {human_bytes(batch)} "
        f"batches ({batch_size} samples of {human_bytes(sample)}) = {human_bytes(needed)} in flight; "
        f"{shm.path} has {human_bytes(shm.free)} free of {human_bytes(shm.total)}"
    )
    if needed > shm.free:
        return [Finding(CATEGORY, SHM, "FAIL", evidence + ": workers will die with 'bus error'", SHM_FIX)]
    if needed * 2 > shm.free:
        return [Finding(CATEGORY, SHM, "WARN", evidence + ": less than 2x headroom", SHM_FIX)]
    return [Finding(CATEGORY, SHM, "PASS", evidence)]
