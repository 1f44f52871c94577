"""profiling.py: per-sample wall and CPU time measured in one real DataLoader worker."""

from __future__ import annotations

from envguard.smoke.envguard_smoke import profiling
from tests import smoke_planted


def test_profile_in_a_worker_counts_every_thread_of_the_process() -> None:
    """A torch-op augmentation: CPU time on intra-op threads is seen (thread_time missed it); past warm-up."""
    found = profiling.profile(smoke_planted.AugmentedPairs())
    assert found["where"] == "one DataLoader worker" and found["warmup"] == profiling.WARMUP
    assert found["samples"] >= 16
    assert 0 < found["cpu_ms"] <= found["wall_ms"] + 0.05  # one thread in a worker: CPU cannot exceed wall
    slow = profiling.profile(smoke_planted.SlowReads())
    assert slow["wall_ms"] >= 4.0 and slow["cpu_ms"] < slow["wall_ms"] / 2  # I/O-bound: waits, little CPU
