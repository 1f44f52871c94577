"""What doctor measures (the only part that touches the machine): the host, the GPUs (NVML and the kernel
driver), the environment's torch through its own interpreter, its files against conda-meta, the data
folder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from envguard.cuda import FamilyMember, torch_family
from envguard.doctor.records import DoctorFacts, FreeSpace, TorchFamily
from envguard.errors import BadInputError, EnvguardError, ProbeError, UsageError
from envguard.machine import coldread, disk, gpu, host
from envguard.model import Fingerprints
from envguard.prefix.condaconfig import pkgs_dirs
from envguard.prefix.integrity import IntegrityReport, verify_files
from envguard.prefix.probe import interpreter, run_probe
from envguard.process import TimedOut, one_line
from envguard.process import run as run_program
from envguard.sources import read_live, resolve_prefix

IMPORTS_MARKER = "ENVGUARD-IMPORTS: "
# imports each module in turn in the environment's interpreter (torch first, as torchvision needs it) and
# prints which failed with the exception's first line
IMPORTS = (
    "import json, sys\n"
    "out = {}\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        __import__(name)\n"
    "        out[name] = ''\n"
    "    except BaseException as exc:\n"
    "        out[name] = '%s: %s' % (type(exc).__name__, (str(exc).strip().splitlines() or [''])[-1])\n"
    f"print({IMPORTS_MARKER!r} + json.dumps(out))\n"
)
IMPORT_TIMEOUT_S = 120.0  # torch, torchvision and torchaudio imported cold on a busy machine
MODULES = {"pytorch": "torch", "pytorch-gpu": "torch", "pytorch-cpu": "torch"}


def _prefix(source: str | None) -> Path:
    if source and not source.startswith("name:") and os.path.isfile(os.path.expanduser(source)):
        raise UsageError(f"{source}: doctor checks a live environment (a prefix or name:ENV), not a file")
    prefix = resolve_prefix(source)
    if not os.path.isdir(prefix):  # os.path: a name too long for the file system is no folder either
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


def _family(prefix: Path) -> TorchFamily:
    """torch, torchvision and torchaudio as installed (conda-meta and pip metadata) and whether each imports
    in the environment's own interpreter."""
    try:
        members = torch_family(read_live(prefix, detect_virtual=False).packages)
    except EnvguardError as exc:
        return TorchFamily(note=str(exc), prefix=str(prefix))
    if len(members) < 2:
        return TorchFamily(members=members, prefix=str(prefix))
    return TorchFamily(members=members, imports=_imports(prefix, members), prefix=str(prefix))


def _imports(prefix: Path, members: tuple[FamilyMember, ...]) -> tuple[tuple[str, str], ...]:
    """(module, '' or the error's last line) for each member, imported in order in one fresh interpreter."""
    names = [MODULES.get(m.name, m.name) for m in members]
    try:
        python = interpreter(prefix)
        done = run_program([python, "-s", "-c", IMPORTS, *names], timeout=IMPORT_TIMEOUT_S)
    except (BadInputError, OSError) as exc:
        return tuple((name, f"not imported: {exc}") for name in names)
    except TimedOut:
        return tuple((name, f"not imported: no answer within {IMPORT_TIMEOUT_S:g} s") for name in names)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith(IMPORTS_MARKER)), None)
    if line is None:
        why = one_line(done.stderr) or f"exit code {done.returncode}"
        return tuple((name, f"the interpreter crashed: {why}") for name in names)
    found = json.loads(line[len(IMPORTS_MARKER) :])
    return tuple((name, str(found.get(name, ""))) for name in names)


def _space(prefix: Path, data_dir: Path | None) -> tuple[FreeSpace, ...]:
    """Free space where the environment, the package caches and the data live (one entry per filesystem
    path that exists)."""
    places = [("environment", prefix)]
    places += [("package cache", p) for p in pkgs_dirs() if p.is_dir()]
    if data_dir is not None:
        places.append(("data", data_dir))
    out: list[FreeSpace] = []
    for what, path in places:
        try:
            usage = shutil.disk_usage(path)
        except OSError:
            continue
        out.append(FreeSpace(what, str(path), usage.free, usage.total))
    return tuple(out)


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
        family=_family(prefix),
        space=_space(prefix, data_dir),
    )
