"""Where a sync's time went, by stage (`sync --timings`): reading the environment and the lock, planning,
proving the archives, the conda and pip engines' own work, and the check afterwards, so that what envguard
adds to its engines is visible beside them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Timing:
    """One stage's wall time; `detail` names the engine that ran it, where one did."""

    stage: str
    seconds: float
    detail: str = ""


class Stopwatch:
    """Times stages in the order they run."""

    def __init__(self, before: tuple[Timing, ...] = ()) -> None:
        self._done = list(before)

    @contextmanager
    def stage(self, name: str, detail: str = "") -> Iterator[None]:
        """Time the block as stage `name` (recorded even when it raises, for the stages before it)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self._done.append(Timing(name, time.perf_counter() - start, detail))

    @property
    def timings(self) -> tuple[Timing, ...]:
        return tuple(self._done)
