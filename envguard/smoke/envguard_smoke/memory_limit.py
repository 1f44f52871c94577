"""The memory limit the module and every DataLoader worker run under (issue 28), and the most memory any of
them held.

RLIMIT_DATA, not RLIMIT_AS: since Linux 4.7 it counts what a dataset allocates (the heap, anonymous and other
private writable mappings), so an allocation past it fails with MemoryError (torch: "can't allocate memory")
where the kernel's OOM killer would otherwise end the process or the machine; the address space libraries only
reserve (CUDA reserves far more than the machine has) is not counted. It applies per process: each worker has
its own, inherited at fork, spawn or forkserver.

It counts the libraries' own private writable mappings too (their data and bss segments, allocator pools), and
those depend on the wheel: after `import torch` /proc/self/status shows VmData 217 MiB with the CPU wheel but
765 MiB with the CUDA one (torch 2.13.0+cu130: cuBLAS, cuDNN, NCCL...). A limit of the bare figure, set before
the import, left a dataset 800 MiB of a 1 GiB limit under the CPU wheel and 256 MiB under the CUDA wheel. So
the limit is re-based: `apply` is called after torch (and numpy) are imported, and sets RLIMIT_DATA to what is
mapped then (the start-up) plus the memory asked for, plus RESERVE. The dataset gets what the user asked for
with either wheel. A forked worker inherits the module's mappings and its limit, so it counts the same
start-up; a spawned one, or one of the fresh interpreters of the cross-process check (which re-base
themselves), imports the same libraries and starts within a few MiB of it. A cgroup v2 memory.max would count
resident memory instead, but it can only be made where the user may create cgroups (often not in a container
or on a login node); RLIMIT_DATA works for every user, in every process, on Linux.

RESERVE is mapped (private, writable, never touched: address space the limit counts, no memory) and given back
the moment a process of the run sees a MemoryError (`note`): a process at its limit has nothing left for a
thread stack or a pickled message, so a DataLoader worker's MemoryError could be lost on its way to the main
process, which then waited for that batch until --budget (or a fresh interpreter never answered). With the
reserve it is reported; the process reads no more samples, and the module measures nothing after it (every
phase would meet the limit again): a MemoryError ends the run in the out-of-memory finding.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Dict, Optional

RESERVE = 64 << 20  # bytes kept back per process for reporting a MemoryError (thread stacks, messages)
STATUS = "/proc/self/status"
OOM_WORDS = ("memoryerror", "can't allocate memory", "cannot allocate memory")
ENV = "ENVGUARD_SMOKE_MEMORY_LIMIT"  # the bytes asked for, for the run's fresh interpreters to re-base on
_STATE: Dict[str, Any] = {"startup": None, "base": None, "reserve": None, "exhausted": False}


def _status_kib(field: str) -> Optional[int]:
    """A `field:  N kB` line of /proc/self/status, in bytes; None where there is no /proc."""
    try:
        with open(STATUS) as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def mapped_bytes() -> int:
    """What RLIMIT_DATA counts in this process now (VmData); 0 where /proc does not say."""
    return _status_kib("VmData") or 0


def _reserve() -> Optional[Any]:
    """RESERVE bytes of private writable address space, untouched: the limit counts it, nothing is used."""
    import mmap

    try:
        return mmap.mmap(
            -1, RESERVE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=mmap.PROT_READ | mmap.PROT_WRITE
        )
    except (OSError, ValueError, AttributeError):  # no MAP_ANONYMOUS (not Linux): no reserve
        return None


def apply(limit_bytes: Optional[int]) -> Optional[int]:
    """Let this process allocate `limit_bytes` more than it has mapped now (call it after the imports: the
    start-up is not the dataset's), with RESERVE kept back; None: leave the limit as it is. The memory the
    dataset may use under the limit now in force, or None when there is none or the platform has no such
    limit."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return None
    kind = getattr(resource, "RLIMIT_DATA", None)
    if kind is None:
        return None
    soft, hard = resource.getrlimit(kind)
    if limit_bytes is None:
        return None if soft == resource.RLIM_INFINITY else int(soft)
    release()  # re-based (a fresh interpreter of the run): its own reserve, not one it inherited
    _STATE["startup"] = _status_kib("VmRSS")
    reserve = _reserve()
    base = mapped_bytes()  # with the reserve: it is held back from the dataset
    wanted = base + limit_bytes
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    try:
        resource.setrlimit(kind, (wanted, hard))
    except (ValueError, OSError):
        if reserve is not None:
            reserve.close()
        return None if soft == resource.RLIM_INFINITY else int(soft)
    _STATE["reserve"], _STATE["base"] = reserve, base - (RESERVE if reserve is not None else 0)
    return max(0, wanted - base)


def held_bytes() -> Optional[int]:
    """What this process has allocated past the start-up the limit was based on (its reserve left out): at a
    MemoryError, how far the dataset got. A forked worker counts from the module's start-up, as its limit
    does. None where no limit was set here or /proc does not say."""
    base, now = _STATE["base"], mapped_bytes()
    if base is None or not now:
        return None
    return max(0, now - int(base) - (RESERVE if _STATE["reserve"] is not None else 0))


def hand_down(limit_bytes: Optional[int]) -> None:
    """Every interpreter this process starts from now on re-bases `limit_bytes` on its own start-up (`adopt`):
    the smoke module's, for its spawn/forkserver workers and cross-process checks."""
    if limit_bytes is not None:
        os.environ[ENV] = str(limit_bytes)


def adopt() -> None:
    """In a fresh interpreter the run started (a spawn or forkserver worker as it receives the dataset, a
    cross-process check), once torch is imported: re-base the limit it inherited on its own start-up. A
    forked worker keeps the module's (it shares the module's start-up); nothing when there is no limit."""
    wanted = os.environ.get(ENV)
    if wanted and _STATE["startup"] is None:
        with contextlib.suppress(ValueError):
            apply(int(wanted))


def release() -> None:
    """Give back this process's RESERVE (a forked worker its copy): room to report a MemoryError. Needs no
    memory itself; harmless when there is none."""
    reserve = _STATE["reserve"]
    if reserve is not None:
        _STATE["reserve"] = None
        reserve.close()


def note(exc: BaseException) -> bool:
    """True when `exc` is this process running out of memory: then its RESERVE is given back (room to report
    it) and the run is `exhausted` (the module measures nothing more: every phase would meet the limit
    again)."""
    if not out_of_memory(exc):
        return False
    release()
    _STATE["exhausted"] = True
    return True


def exhausted() -> bool:
    """This process has run out of memory (or learnt that one of its workers did)."""
    return bool(_STATE["exhausted"])


def out_of_memory(exc: BaseException) -> bool:
    """A MemoryError, or torch's "can't allocate memory" (a RuntimeError from its allocator)."""
    return isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and oom_text(str(exc)))


def oom_text(error: str) -> bool:
    """An error's text that says the host's memory ran out (as envguard's verdict reads it)."""
    lowered = error.lower()
    return any(word in lowered for word in OOM_WORDS) and "cuda" not in lowered


def startup_bytes() -> Optional[int]:
    """The resident memory this process had when the limit was set (torch and its libraries)."""
    value = _STATE["startup"]
    return int(value) if value is not None else None


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


def record(limit_bytes: Optional[int], peak: bool = True) -> Dict[str, Any]:
    """What the output carries: the limit in force, the resident memory at start-up, and the peak so far."""
    out = {"limit_bytes": limit_bytes, "startup_bytes": startup_bytes()}
    return dict(out, peak_bytes=peak_bytes()) if peak else out
