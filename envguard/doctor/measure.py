"""What doctor measures (the only part that touches the machine): the host, the GPUs (NVML and the kernel
driver), the environment's torch through its own interpreter, its files against conda-meta, the data
folder."""

from __future__ import annotations

import os
from pathlib import Path

from envguard.doctor.records import DoctorFacts
from envguard.errors import BadInputError, ProbeError, UsageError
from envguard.machine import coldread, disk, gpu, host
from envguard.model import Fingerprints
from envguard.prefix.integrity import IntegrityReport, verify_files
from envguard.prefix.probe import interpreter, run_probe
from envguard.sources import resolve_prefix


def _prefix(source: str | None) -> Path:
    if source and not source.startswith("name:") and Path(source).expanduser().is_file():
        raise UsageError(f"{source}: doctor checks a live environment (a prefix or name:ENV), not a file")
    prefix = resolve_prefix(source)
    if not prefix.is_dir():
        raise BadInputError(f"{prefix}: no such environment folder; give a prefix path or name:ENV")
    return prefix


def _torch(prefix: Path) -> tuple[Fingerprints | None, str]:
    """(what the probe measured in the environment's interpreter, why there is nothing)."""
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
