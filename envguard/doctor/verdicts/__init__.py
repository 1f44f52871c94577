"""Doctor's verdicts (pure: records in, Findings out), one module per concern: the GPU and torch/CUDA, the
host, the data folder's storage, the environment's files."""

from __future__ import annotations

from envguard.doctor.records import DoctorFacts
from envguard.doctor.verdicts.environment import health_findings
from envguard.doctor.verdicts.family import family_findings, space_findings
from envguard.doctor.verdicts.gpu import gpu_findings, torch_findings
from envguard.doctor.verdicts.host import (
    cpu_findings,
    memory_findings,
    open_files_findings,
    shm_findings,
)
from envguard.doctor.verdicts.storage import disk_findings
from envguard.findings import Finding
from envguard.pipeline import most_workers


def all_findings(facts: DoctorFacts) -> list[Finding]:
    """Every doctor finding in display order."""
    workers = most_workers(facts.cpus.usable, facts.ranks)
    return [
        *gpu_findings(facts.nvml, facts.presence),
        *torch_findings(facts.torch, facts.torch_error, facts.nvml, facts.presence),
        *cpu_findings(facts.cpus, facts.ranks, facts.ranks_source),
        *open_files_findings(facts.open_files),
        *memory_findings(facts.memory),
        *shm_findings(facts.shm, workers),
        *disk_findings(facts.disk, facts.shm, facts.latency),
        *health_findings(facts.integrity, facts.integrity_note, facts.integrity_unreadable),
        *family_findings(facts.family),
        *space_findings(facts.space),
    ]
