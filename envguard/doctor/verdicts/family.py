"""Doctor's verdicts on the torch family and on free disk space (pure): torch, torchvision and torchaudio
from one release train and one build, each importable in the environment; room left where the environment,
the package caches and the data live."""

from __future__ import annotations

from pathlib import Path

from envguard.cuda import family_problems
from envguard.doctor.records import FreeSpace, TorchFamily
from envguard.findings import Finding
from envguard.output import human_bytes, shell_quote

CHECK = "torch family"
LOW_SPACE = 2 * 1024**3  # a CUDA torch and its libraries take about this much to install or update


def _fix(family: TorchFamily) -> str:
    torch = family.members[0]
    others = " ".join(m.name for m in family.members[1:])
    public = torch.version.split("+", 1)[0]
    if torch.manager == "pip":
        index = (
            torch.build.replace("cuda ", "cu").replace(".", "") if torch.build.startswith("cuda") else "cpu"
        )
        python = shell_quote(str(Path(family.prefix) / "bin" / "python"))
        return (
            f"install the {others} built for torch {public} from torch's own index, e.g. `{python} -m pip "
            f"install --index-url https://download.pytorch.org/whl/{index} {others}` (pip picks the "
            "matching versions), or pin the versions its release notes pair with it"
        )
    return (
        f"install them together so the solver pairs them: `conda install -p {shell_quote(family.prefix)} "
        f"pytorch={public} {others}` from one channel (the same CUDA or CPU variant)"
    )


def family_findings(family: TorchFamily) -> list[Finding]:
    """FAIL when a member does not import (it is broken as installed); WARN when they come from different
    release trains or builds but import; PASS when they agree."""
    if family.note:
        return [Finding("environment", CHECK, "INFO", f"not checked: {family.note}")]
    if len(family.members) < 2:
        return []
    listed = ", ".join(f"{m.label()} ({m.build})" for m in family.members)
    problems = family_problems(family.members)
    broken = [(name, error) for name, error in family.imports if error]
    if broken:
        failed = "; ".join(f"import {name}: {error}" for name, error in broken)
        why = f" because {'; '.join(problems)}" if problems else ""
        return [
            Finding(
                "environment",
                CHECK,
                "FAIL",
                f"{listed}: {failed} (in the environment's interpreter){why}",
                _fix(family),
            )
        ]
    if problems:
        return [Finding("environment", CHECK, "WARN", f"{listed}: {'; '.join(problems)}", _fix(family))]
    imported = " and all import" if family.imports else ""
    return [Finding("environment", CHECK, "PASS", f"{listed}: one release train and one build{imported}")]


def space_findings(space: tuple[FreeSpace, ...]) -> list[Finding]:
    """Free space where the environment, the package caches and the data live (one finding per place)."""
    out: list[Finding] = []
    for place in space:
        evidence = f"{human_bytes(place.free)} free of {human_bytes(place.total)} at {place.path}"
        if place.free < LOW_SPACE:
            fix = (
                "free space before installing or updating (envguard clean removes package-cache entries no "
                "environment uses)"
                if place.what != "data"
                else "free space there: checkpoints and caches written next to the data fail when it fills"
            )
            out.append(Finding("disk", f"free space: {place.what}", "WARN", evidence, fix))
        else:
            out.append(Finding("disk", f"free space: {place.what}", "PASS", evidence))
    return out
