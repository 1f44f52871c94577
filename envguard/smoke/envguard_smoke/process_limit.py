"""The number of processes a run may start (issue 42): a dataset or a loader that forks without bound (a fork
bomb, a pool started per sample) would otherwise fill the machine's process table, other users' jobs
included.

RLIMIT_NPROC, set in the measuring module before any DataLoader worker starts, and inherited by every worker
and every process they start (fork, spawn or forkserver). The kernel counts it per user, threads included,
across the machine: a fork or a thread start fails (EAGAIN, "Resource temporarily unavailable") once the
user's tasks reach it. So the limit is what the user runs now plus HEADROOM, enough for the workers, their
threads and a sweep's loaders. Not enforced for root (or a process with CAP_SYS_RESOURCE or CAP_SYS_ADMIN),
where it is still set and visible in /proc/PID/limits; a cgroup's pids.max would hold root too, but a
container's is rarely writable. A lower limit already in force is kept.
"""

from __future__ import annotations

import os
from typing import Optional

PER_CPU = 32  # tasks per CPU: a worker per CPU with its threads, the main process's intra-op pool, a sweep's


def headroom() -> int:
    """How many more tasks (processes and threads) a run may start than its user runs when it begins."""
    return 512 + PER_CPU * (os.cpu_count() or 1)


def user_tasks(uid: Optional[int] = None) -> Optional[int]:
    """The tasks (threads) the user `uid` (default: this process's real user) runs now, from /proc; None
    where there is no /proc."""
    uid = os.getuid() if uid is None else uid
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    total = 0
    for name in names:
        if not name.isdigit():
            continue
        owner, threads = None, 1
        try:
            with open("/proc/%s/status" % name) as handle:
                for line in handle:
                    if line.startswith("Uid:"):
                        owner = int(line.split()[1])
                    elif line.startswith("Threads:"):
                        threads = int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        if owner == uid:
            total += threads
    return total


def apply() -> Optional[int]:
    """Limit this process and everything it starts to the user's tasks now plus `headroom()`; the limit in
    force afterwards (a lower one already set is kept), or None where there is no such limit."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return None
    kind = getattr(resource, "RLIMIT_NPROC", None)
    running = user_tasks()
    if kind is None or running is None:
        return None
    soft, hard = resource.getrlimit(kind)
    wanted = running + headroom()
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft <= wanted:
        return int(soft)
    try:
        resource.setrlimit(kind, (wanted, hard))
    except (ValueError, OSError):
        return None if soft == resource.RLIM_INFINITY else int(soft)
    return wanted
