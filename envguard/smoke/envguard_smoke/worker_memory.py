"""Per-worker memory: each DataLoader worker's USS/PSS (psutil when installed, else /proc/PID/smaps_rollup)
after its first batch and after K random indices. A dataset holding a large Python list/dict of objects grows
every forked worker's USS as reading touches the objects' refcounts (copy-on-read, pytorch#13246); numpy
arrays do not.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import time
from typing import Any, Dict, List, Optional

BIG = 10000  # a list/dict this long on the dataset is named as a likely culprit
SCAN = 50  # items of a container looked at to tell Python objects from numbers


def usage(pid: int) -> Optional[Dict[str, int]]:
    """{"uss": bytes, "pss": bytes} of a process, or None when it cannot be read."""
    try:
        import psutil

        info = psutil.Process(pid).memory_full_info()
        return {"uss": int(info.uss), "pss": int(getattr(info, "pss", info.uss))}
    except ImportError:
        pass
    except Exception:
        return None
    fields: Dict[str, int] = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as handle:
            for line in handle:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[-1] == "kB":
                    fields[key] = int(parts[0]) * 1024
    except (OSError, ValueError):
        return None
    if "Pss" not in fields:
        return None
    return {"uss": fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0), "pss": fields["Pss"]}


def culprits(dataset: Any) -> List[Dict[str, Any]]:
    """Large Python lists/dicts of objects among the dataset's attributes (a bounded scan, one level deep)."""
    out: List[Dict[str, Any]] = []
    for name, value in sorted((getattr(dataset, "__dict__", None) or {}).items()):
        if isinstance(value, (list, tuple, dict)) and len(value) >= BIG:
            items = list(value.values() if isinstance(value, dict) else value[:SCAN])[:SCAN]
            kinds = sorted({type(item).__name__ for item in items})
            out.append(
                {
                    "name": "dataset.%s" % name,
                    "container": type(value).__name__,
                    "length": len(value),
                    "items": kinds,
                }
            )
    return out


def _workers_usage() -> Dict[int, Optional[Dict[str, int]]]:
    return {child.pid: usage(child.pid) for child in multiprocessing.active_children() if child.pid}


def measure(
    dataset: Any,
    *,
    workers: int,
    indices: int,
    batch_size: int,
    seed: int,
    deadline: float,
    watch_dir: Optional[str] = None,
) -> Dict[str, Any]:
    """USS/PSS of each worker after its first batch and after `indices` random indices (fork workers: the
    copy-on-write case; spawn/forkserver workers unpickle their own copy)."""
    import torch
    from torch.utils.data import DataLoader, IterableDataset, RandomSampler

    if isinstance(dataset, IterableDataset) or not hasattr(dataset, "__len__"):
        return {}  # no random access: nothing to read K random indices of
    length = len(dataset)
    count = min(indices, length)
    batch_size = max(
        1, min(batch_size, count // (2 * max(workers, 1) + 4))
    )  # warm-up, reads, two spare batches
    sampler = RandomSampler(dataset, num_samples=count, generator=torch.Generator().manual_seed(seed))
    from .heartbeat import wrap

    loader = DataLoader(wrap(dataset, watch_dir), batch_size=batch_size, sampler=sampler, num_workers=workers)
    record: Dict[str, Any] = {
        "workers": workers,
        "indices": count,
        "length": length,
        "parent": usage(os.getpid()),
        "culprits": culprits(dataset),
    }
    from .datasets import batch_bytes

    # The workers fork with this process's objects frozen out of the cyclic GC: a collection in a worker
    # would otherwise write to every container this process holds (a test runner's whole heap) and count
    # as the dataset's copy-on-read; the dataset's own reads (refcounts) still copy the pages they touch.
    gc.collect()
    gc.freeze()
    try:
        iterator = iter(loader)
        read = 0
        for _warm in range(2 * max(workers, 1)):  # past each worker's start-up allocations
            batch = next(iterator)
            record["sample_bytes"] = record.get("sample_bytes") or batch_bytes(batch) // batch_size
            read += batch_size
    finally:
        gc.unfreeze()  # the workers keep their frozen copy
    del batch
    record["start"] = _workers_usage()
    record["parent_start"] = usage(os.getpid())  # with the workers: the pages they share are split now
    record["start_after"] = read
    # stop two batches short of the end: an exhausted iterator shuts its workers down before they can be read
    while read < count - 2 * batch_size and time.perf_counter() < deadline:
        next(iterator)
        read += batch_size
    record["end"] = _workers_usage()
    record["parent_end"] = usage(os.getpid())
    record["indices"] = read - record["start_after"]
    del iterator, loader
    record["start"] = {str(k): v for k, v in record["start"].items()}
    record["end"] = {str(k): v for k, v in record["end"].items()}
    return record


def phase(settings: Dict[str, Any], dataset: Any, deadline: float) -> Dict[str, Any]:
    options = settings.get("memory") or {}
    return measure(
        dataset,
        workers=int(options.get("workers", 2)),
        indices=int(options.get("indices", 16384)),
        batch_size=int(options.get("batch_size", 256)),
        seed=int(options.get("seed", 0)),
        deadline=deadline,
        watch_dir=settings.get("watch_dir"),
    )
