"""`run_doctor` gathers the facts (the only part that touches the machine) and judges them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.doctor.facts import DoctorFacts
from envguard.doctor.host_rules import all_findings
from envguard.errors import BadInputError, ProbeError, UsageError
from envguard.findings import Finding
from envguard.machine import disk, gpu, host
from envguard.prefix.integrity import IntegrityReport, verify_files


@dataclass(frozen=True, slots=True)
class DoctorReport:
    facts: DoctorFacts
    recommended_workers: int
    findings: tuple[Finding, ...]


def _prefix(source: str | None) -> Path:
    from envguard.sources import resolve_prefix

    if source and not source.startswith("name:") and Path(source).expanduser().is_file():
        raise UsageError(f"{source}: doctor checks a live environment (a prefix or name:ENV), not a file")
    prefix = resolve_prefix(source)
    if not prefix.is_dir():
        raise BadInputError(f"{prefix}: no such environment folder; give a prefix path or name:ENV")
    return prefix


def _torch(prefix: Path) -> tuple[Any, str]:
    from envguard.prefix.probe import interpreter, run_probe

    try:
        interpreter(prefix)
    except BadInputError:
        return None, f"{prefix} has no Python interpreter, so no torch"
    try:
        return run_probe(prefix), ""
    except ProbeError as exc:
        return None, str(exc)


def _integrity(prefix: Path, hashes: bool) -> tuple[IntegrityReport | None, str, bool]:
    """(the file check, why there is none, whether conda-meta was unreadable)."""
    if not (prefix / "conda-meta").is_dir():
        return None, f"{prefix} is not a conda environment (no conda-meta/): file check skipped", False
    try:
        return verify_files(prefix, hashes=hashes), "", False
    except BadInputError as exc:
        return None, str(exc), True


def gather(source: str | None, data_dir: Path | None, *, hashes: bool = True) -> DoctorFacts:
    """Measure the host, the GPUs (NVML), the environment's torch (its own interpreter) and its files."""
    import os

    from envguard.machine import coldread

    prefix = _prefix(source)
    fingerprints, torch_error = _torch(prefix)
    report, note, unreadable = _integrity(prefix, hashes)
    nvml, presence = gpu.read_nvml(), gpu.driver_presence()
    visible = host.visible_gpu_count(os.environ, len(nvml.gpus) or presence.count)
    ranks, ranks_source = host.ranks_per_node(os.environ, visible)
    return DoctorFacts(
        environment=str(prefix),
        cpus=host.cpu_info(),
        memory=host.memory_info(),
        shm=host.shm_info(),
        open_files=host.open_files_limit(),
        nvml=nvml,
        torch=fingerprints,
        torch_error=torch_error,
        disk=disk.disk_info(data_dir) if data_dir is not None else None,
        integrity=report,
        integrity_note=note,
        integrity_unreadable=unreadable,
        presence=presence,
        ranks=ranks,
        ranks_source=ranks_source,
        latency=coldread.measure(data_dir) if data_dir is not None else None,
    )


def run_doctor(
    source: str | None = None, data_dir: Path | None = None, *, hashes: bool = True
) -> DoctorReport:
    facts = gather(source, data_dir, hashes=hashes)
    return DoctorReport(
        facts=facts,
        recommended_workers=host.recommended_workers(facts.cpus, facts.ranks),
        findings=tuple(all_findings(facts)),
    )


def to_dict(report: DoctorReport) -> dict[str, Any]:
    """The JSON body; disk properties (network, in-memory) spelled out."""
    ordered: dict[str, Any] = dataclasses.asdict(report)
    if report.facts.disk is not None:
        ordered["facts"]["disk"].update(
            network=report.facts.disk.network, in_memory=report.facts.disk.in_memory
        )
    return ordered
