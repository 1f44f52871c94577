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


def test_profile_sees_a_process_spinning_in_another_session_and_torchs_threads() -> None:
    """Beside a busy process in a session of its own (another user's job: the kernel's autogroup gives the
    profile's worker a core of its own), the worker's share of a core says nothing; the cores the machine
    kept busy besides this process and its worker (/proc/stat) do. And the intra-op threads a step in this
    interpreter would run."""
    import os
    import subprocess
    import sys

    import torch

    spinner = subprocess.Popen(
        [sys.executable, "-c", "while True: pass"], start_new_session=True, stdin=subprocess.DEVNULL
    )
    try:
        found = profiling.profile(smoke_planted.AugmentedPairs())
    finally:
        spinner.kill()
        spinner.wait()
    # one core spinning, less what the scheduler took from it for the worker (at most half, on 2 cores)
    assert 0.5 <= found["others_cores"] <= (os.cpu_count() or 1), found
    assert found["threads"] == torch.get_num_threads()
