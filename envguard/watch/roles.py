"""Which processes of the watched tree train and which load their data (pure)."""

from __future__ import annotations

from dataclasses import replace

from envguard.watch.records import ProcSample


def main_pids(procs: tuple[ProcSample, ...], hooked: set[int]) -> set[int]:
    """Training processes: those the hook reported from, else the lowest processes that have children
    (python train.py over its workers; each torchrun rank), else the root."""
    if hooked:
        return hooked
    parents = {p.ppid for p in procs}
    with_children = {p.pid for p in procs if p.pid in parents}
    lowest = {
        pid for pid in with_children if not any(p.ppid == pid and p.pid in with_children for p in procs)
    }
    if not procs:
        return set()
    return lowest or {procs[0].pid}


def label(procs: tuple[ProcSample, ...], mains: set[int]) -> tuple[ProcSample, ...]:
    """Mark the training processes and their children (DataLoader workers)."""
    return tuple(
        replace(p, role="main" if p.pid in mains else "worker" if p.ppid in mains else "other") for p in procs
    )
