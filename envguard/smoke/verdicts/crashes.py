"""Crashes inside the environment (pure): a phase that raised, with the fix its message points at."""

from __future__ import annotations

from collections.abc import Sequence

from envguard.findings import Finding
from envguard.smoke.measured import PhaseError
from envguard.smoke.verdicts.memory import SHM_FIX


def phase_errors(errors: Sequence[PhaseError]) -> list[Finding]:
    """One FAIL per phase that raised."""
    return [crash(f"{e.phase} phase", e.error) for e in errors]


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
