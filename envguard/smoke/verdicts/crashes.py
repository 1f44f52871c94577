"""Crashes inside the environment (pure): a phase that raised, with the fix its message points at; and one
running out of memory (issue 28), named as such with the memory it reached and the limit, never as a crash to
debug with num_workers=0."""

from __future__ import annotations

import signal
from collections.abc import Sequence

from envguard.findings import Finding
from envguard.smoke.measured import UNMEASURED, MemoryUse, PhaseError
from envguard.smoke.verdicts.memory import SHM_FIX

GIB = 1 << 30
NEAR_LIMIT = 0.9  # a SIGKILL with a peak this close to the limit is the limit's doing
ROOM = 0.9  # a limit below this share of the memory available can be raised
OOM_WORDS = ("memoryerror", "can't allocate memory", "cannot allocate memory", "out of memory")
KILLED_WORDS = ("killed by signal: killed", "exited unexpectedly")  # a DataLoader worker SIGKILLed


def phase_errors(errors: Sequence[PhaseError], use: MemoryUse = UNMEASURED) -> list[Finding]:
    """One FAIL per phase that raised, except for memory (see `out_of_memory`)."""
    return [crash(f"{e.phase} phase", e.error) for e in errors if not out_of_memory_text(e.error, use)]


def out_of_memory_text(error: str, use: MemoryUse = UNMEASURED) -> bool:
    """An error that is the host's memory running out: a MemoryError (the limit), torch's "can't allocate
    memory", or a worker SIGKILLed while the cgroup's OOM killer killed. CUDA's own out of memory is the
    GPU's, not this."""
    lowered = error.lower()
    if "cuda out of memory" in lowered or "cuda error: out of memory" in lowered:
        return False
    if any(word in lowered for word in OOM_WORDS):
        return True
    return bool(use.oom_kills) and any(word in lowered for word in KILLED_WORDS)


def died_of_memory(returncode: int, last_line: str, use: MemoryUse) -> bool:
    """The module ended without its result because of memory: a MemoryError it could not report, or SIGKILL
    while the cgroup's OOM killer killed or with its peak near the limit."""
    if out_of_memory_text(last_line, use):
        return True
    if returncode != -signal.SIGKILL:
        return False
    if use.oom_kills:
        return True
    return bool(use.limit_bytes and use.reached_bytes and use.reached_bytes >= NEAR_LIMIT * use.limit_bytes)


def out_of_memory(use: MemoryUse, errors: Sequence[str], available: int | None) -> list[Finding]:
    """One FAIL when the module or a worker ran out of memory: the figure it reached, the limit, and the fix
    that fits (less per process, or a higher --memory-limit where the machine has room for it)."""
    hits = [error for error in errors if out_of_memory_text(error, use)]
    if not hits and not use.killed:
        return []
    reached = f"{use.reached_bytes / GIB:.2f} GiB" if use.reached_bytes else "its limit"
    limit = f"limit {use.limit_bytes / GIB:.2f} GiB" if use.limit_bytes else "no limit: --memory-limit none"
    if use.startup_bytes and use.reached_bytes:  # the limit counts what a process allocates past it
        limit += f", past the {use.startup_bytes / GIB:.2f} GiB torch holds at start-up"
    how = (
        "; killed by the out-of-memory killer (SIGKILL), so nothing else was measured"
        if use.killed and use.oom_kills
        else "; killed (SIGKILL) near the limit, so nothing else was measured"
        if use.killed and not hits
        else f" ({hits[0].strip().splitlines()[0]})"
        if hits
        else ""
    )
    evidence = f"out of memory: the dataset (or a worker) reached {reached} ({limit}){how}"
    less = (
        "lower batch_size or num_workers (each worker is a process with its own copy of what the dataset "
        "keeps), or keep less per sample (a cache without bound)"
    )
    if use.limit_bytes and available and use.limit_bytes < ROOM * available:
        fix = (
            f"{less}; or raise --memory-limit above {use.limit_bytes / GIB:.2f} GiB "
            f"(the machine has {available / GIB:.1f} GiB available)"
        )
    else:
        room = f"the machine has {available / GIB:.1f} GiB available, " if available else ""
        fix = f"{less}; {room}so a higher --memory-limit would fill the machine"
    return [Finding("memory", "out of memory", "FAIL", evidence, fix)]


def crash(category: str, error: str) -> Finding:
    """A crash inside the environment, with the fix its message points at."""
    lowered = error.lower()
    if "bus error" in lowered or "shared memory" in lowered or "shm" in lowered:
        fix = SHM_FIX
    elif "ancdata" in lowered or "too many open files" in lowered:
        fix = (
            "raise the open-file limit (`ulimit -n 65536`) or call "
            "torch.multiprocessing.set_sharing_strategy('file_system') before creating the DataLoader"
        )
    elif "pickle" in lowered or "can't get attribute" in lowered:
        fix = (
            "define the dataset, collate_fn and worker_init_fn at module level so spawn/forkserver workers "
            "can pickle them"
        )
    else:
        fix = (
            "run the dataset once with num_workers=0 to see the full traceback, fix it, then rerun "
            "envguard smoke"
        )
    return Finding(category, "crash", "FAIL", error, fix)
