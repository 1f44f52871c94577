"""How export writes a version pin: without builds (`--no-builds`), relaxed (`--relax major|minor`), and the
CUDA choice a stripped build keeps (pure).

`numpy=1.26.4` relaxed to `minor` is `numpy=1.26.*`, to `major` `numpy=1.*`; pip's `six==1.16.0` becomes
`six==1.16.*`. A CUDA build's choice survives stripping and relaxing: `pytorch=2.1.*=*cuda11.8*`, so a solver
on a machine without `__cuda` fails loudly instead of quietly installing the CPU build.
"""

from __future__ import annotations

import re
from typing import Literal

from envguard.model import Package

Relax = Literal["major", "minor"]
RELAX_LEVELS: tuple[Relax, ...] = ("major", "minor")

_CUDA_IN_BUILD = re.compile(r"cuda\d+(?:\.\d+)?", re.IGNORECASE)
# `[channel::]name=version[=build]` as export writes it; anything else (a request as typed) is left alone
_CONDA_PIN = re.compile(
    r"^(?P<head>(?:[^=<>!~ ]+::)?[A-Za-z0-9_.-]+)=(?P<version>[A-Za-z0-9_.+!]+)(?P<rest>=.+)?$"
)
_PIP_PIN = re.compile(r"^(?P<head>[A-Za-z0-9_.\[\],-]+)==(?P<version>[A-Za-z0-9_.+!-]+)$")


def cuda_glob(build: str) -> str | None:
    """`py3.11_cuda11.8_cudnn8.7.0_0` -> `*cuda11.8*`, `cuda118py311h..._0` -> `*cuda118*`; None for other
    builds."""
    match = _CUDA_IN_BUILD.search(build or "")
    return f"*{match.group(0)}*" if match else None


def no_build_line(package: Package) -> str:
    """`name=version` as `conda env export --no-builds` writes it, keeping a CUDA build's choice."""
    accelerator = cuda_glob(package.build)
    line = f"{package.name}={package.version}"
    return f"{line}={accelerator}" if accelerator else line


def relaxed_version(version: str, level: Relax) -> str:
    """`1.26.4` -> `1.26.*` (minor) or `1.*` (major); an epoch is kept (`1!2.0.1` -> `1!2.0.*`), a local
    label dropped (`2.13.0+cpu` -> `2.13.*`), a short version padded (`2` -> `2.0.*`)."""
    epoch, sep, public = version.partition("!")
    if not sep:
        epoch, public = "", version
    parts = public.split("+", 1)[0].split(".")
    width = 1 if level == "major" else 2
    if parts[-1].isdigit():
        parts += ["0"] * (width - len(parts))  # `2` is `2.0` to conda and pip: minor is `2.0.*`, not `2.*`
    return f"{epoch}{sep}{'.'.join(parts[:width])}.*"


def relax_conda_line(line: str, level: Relax) -> str:
    """A pinned conda line with its version relaxed; the build part (a CUDA glob, a typed build) is kept."""
    match = _CONDA_PIN.match(line)
    if match is None:
        return line
    return f"{match['head']}={relaxed_version(match['version'], level)}{match['rest'] or ''}"


def relax_pip_line(line: str, level: Relax) -> str:
    """`name==1.2.3` -> `name==1.2.*`; URLs, paths, options and comments are left as they are."""
    match = _PIP_PIN.match(line)
    if match is None:
        return line
    return f"{match['head']}=={relaxed_version(match['version'], level)}"
