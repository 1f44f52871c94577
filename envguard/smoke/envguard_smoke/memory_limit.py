"""The memory limit the module and every DataLoader worker run under (issue 28): set first, before torch is
imported, and inherited by each worker (fork, spawn or forkserver); and the most memory any of them held.

RLIMIT_DATA, not RLIMIT_AS: since Linux 4.7 it counts what a dataset allocates (the heap, anonymous and other
private writable mappings), so an allocation past it fails with MemoryError (torch: "can't allocate memory")
where the kernel's OOM killer would otherwise end the process or the machine; the address space libraries only
reserve (CUDA reserves far more than the machine has, a CPU torch ~0.6 GiB) is not counted, so the limit does
not break a CUDA start-up. It applies per process: each worker has its own.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, Optional


def apply(limit_bytes: Optional[int]) -> Optional[int]:
    """Lower this process's RLIMIT_DATA to `limit_bytes` (None: leave it); the limit now in force, or None
    when there is none or the platform has no such limit."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return None
    kind = getattr(resource, "RLIMIT_DATA", None)
    if kind is None:
        return None
    soft, hard = resource.getrlimit(kind)
    if limit_bytes is not None:
        wanted = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
        try:
            resource.setrlimit(kind, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return None if soft == resource.RLIM_INFINITY else int(soft)


def peak_bytes() -> Optional[int]:
    """The largest resident set of this process or of any worker it has reaped (ru_maxrss: KiB on Linux,
    bytes on macOS)."""
    try:
        import resource
    except ImportError:
        return None
    scale = 1 if sys.platform == "darwin" else 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return int(max(own, workers)) * scale


def record(limit_bytes: Optional[int]) -> Dict[str, Any]:
    """What the output carries: the limit in force and the peak so far."""
    return {"limit_bytes": limit_bytes, "peak_bytes": peak_bytes()}
