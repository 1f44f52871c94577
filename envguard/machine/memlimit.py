"""A memory limit on this (envguard's own) process: RLIMIT_DATA re-based on what is mapped now, with a
reserve kept back to report a MemoryError — what `smoke --distributed --memory-limit` runs each rank under.

The same rule as the smoke module's in-environment limit (envguard.smoke's program, which must run on the
user's Python without envguard and so keeps its own copy): RLIMIT_DATA counts what a dataset allocates, not
the address space libraries reserve; the limit is what is mapped once torch is imported, plus the memory
asked for, plus RESERVE, mapped untouched and given back (`release`) the moment a MemoryError is caught, so
the rank still has room to tell the other ranks.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field

RESERVE = 64 << 20  # bytes kept back for reporting a MemoryError (a thread stack, the exchange's messages)
STATUS = "/proc/self/status"


def mapped_bytes() -> int:
    """What RLIMIT_DATA counts in this process now (VmData, bytes); 0 where /proc does not say."""
    try:
        with open(STATUS) as handle:
            for line in handle:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return 0


@dataclass
class DataLimit:
    """This process's RLIMIT_DATA once `apply`'d, and the reserve it keeps back."""

    reserve: mmap.mmap | None = field(default=None, repr=False)

    def apply(self, limit_bytes: int) -> int | None:
        """Let this process allocate `limit_bytes` more than it has mapped now (RESERVE held back); the
        bytes it may allocate under the limit in force, None where the platform has no such limit or it
        could not be set."""
        try:
            import resource
        except ImportError:  # not a POSIX system
            return None
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        self.release()
        try:
            self.reserve = mmap.mmap(
                -1,
                RESERVE,
                flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                prot=mmap.PROT_READ | mmap.PROT_WRITE,
            )
        except (OSError, ValueError, AttributeError):  # no MAP_ANONYMOUS (not Linux): no reserve
            self.reserve = None
        base = mapped_bytes()  # with the reserve: it is held back from the dataset
        wanted = base + limit_bytes if hard == resource.RLIM_INFINITY else min(base + limit_bytes, hard)
        try:
            resource.setrlimit(resource.RLIMIT_DATA, (wanted, hard))
        except (ValueError, OSError):
            self.release()
            return None if soft == resource.RLIM_INFINITY else int(soft)
        return max(0, wanted - base)

    def release(self) -> None:
        """Give the reserve back (room to report a MemoryError); harmless when there is none."""
        if self.reserve is not None:
            reserve, self.reserve = self.reserve, None
            reserve.close()
