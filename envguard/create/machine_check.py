"""Can this machine run what is asked? `__cuda` / `__glibc` requirements against the detected virtual
packages.

Detection honours CONDA_OVERRIDE_CUDA / CONDA_OVERRIDE_GLIBC exactly as conda does (through rattler), so a CPU
login node can build for GPU nodes with `CONDA_OVERRIDE_CUDA=12.4`. Two checks:
- before solving (`check_request`): a CUDA build asked for on a machine without a driver is refused, with a
  message
  that says so (instead of the solver's cryptic "nothing provides __cuda");
- after solving or for a lock (`check_plan`): packages needing a newer `__glibc`/`__cuda` than the machine
  offers
  are refused, and a CPU build of a framework chosen on a GPU machine is a warning (conda#14761).
Pure functions: the caller passes the machine's virtual packages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from envguard.create.naming import facts_from_packages, facts_from_specs
from envguard.cuda import cuda_from_build
from envguard.errors import BadInputError
from envguard.model import Environment, Package, RequestedSpec, VirtualPackage, make_environment
from envguard.specs import conda_matches, parse_conda

CUDA_BUILD_PACKAGES = frozenset({"pytorch-cuda", "pytorch-gpu", "tensorflow-gpu", "__cuda"})
TOOLKIT_PACKAGES = frozenset(
    {"cudatoolkit", "cuda-version", "cuda-runtime", "cuda-cudart", "cuda-toolkit", "cuda"}
)
FRAMEWORKS = frozenset({"pytorch", "torch", "tensorflow", "jaxlib", "jax"})
_REQUIREMENT = re.compile(r"^\s*(__cuda|__glibc)\b\s*(.*)$")
_NO_DRIVER = "this machine has no NVIDIA driver (no __cuda virtual package detected)"
_OVERRIDE_HINT = (
    "create it on a GPU machine, set CONDA_OVERRIDE_CUDA=<driver CUDA version, e.g. 12.4> to build "
    "for one from here, or ask for a CPU build"
)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One virtual-package requirement: who needs it and the version constraint ('' = any version)."""

    virtual: str
    constraint: str
    needed_by: str


def machine_version(machine: Sequence[VirtualPackage], name: str) -> str | None:
    return next((v.version for v in machine if v.name == name), None)


def check_request(specs: Sequence[str], machine: Sequence[VirtualPackage], origin: str) -> list[str]:
    """Refuse a CUDA build asked for on a machine without a driver (or with too old a driver); return
    warnings."""
    driver = machine_version(machine, "__cuda")
    warnings: list[str] = []
    for text in specs:
        spec = parse_conda(text)
        cuda_build = spec.name in CUDA_BUILD_PACKAGES or (
            spec.name in FRAMEWORKS and "cuda" in (spec.build or "").lower()
        )
        if spec.name in ("__cuda", "__glibc"):
            _require(Requirement(spec.name, spec.version or "", f"{origin} ({text})"), machine)
        elif cuda_build and driver is None:
            raise BadInputError(f"{origin} asks for a CUDA build ({text}) but {_NO_DRIVER}; {_OVERRIDE_HINT}")
        elif cuda_build and driver is not None:
            wanted = _cuda_of(spec.name, spec.version or "", spec.build or "")
            if wanted and _major(wanted) > _major(driver):
                raise BadInputError(
                    f"{origin} asks for CUDA {wanted} ({text}) but this machine's driver supports CUDA "
                    f"{driver}; "
                    "update the NVIDIA driver or ask for an older CUDA build"
                )
        elif spec.name in TOOLKIT_PACKAGES and driver is None:
            warnings.append(
                f"{origin} asks for {text} but {_NO_DRIVER}; it installs, but nothing will run on a GPU here"
            )
    return warnings


def check_plan(
    packages: Sequence[Package],
    machine: Sequence[VirtualPackage],
    requested: Sequence[str] = (),
    *,
    solved: bool = True,
) -> list[str]:
    """Refuse packages whose `__cuda`/`__glibc` needs the machine cannot meet; warn on a CPU framework build
    a solver chose on a GPU machine unless a CPU build was asked for. A lock (`solved=False`) names its
    builds exactly: no solver chose anything, so there is nothing to warn about."""
    for requirement in requirements(packages):
        _require(requirement, machine)
    return _cpu_on_gpu(packages, machine, requested) if solved else []


def requirements(packages: Sequence[Package]) -> list[Requirement]:
    """Every `__cuda` / `__glibc` dependency of the packages."""
    found: list[Requirement] = []
    for package in packages:
        for dep in package.depends:
            match = _REQUIREMENT.match(dep)
            if match:
                found.append(Requirement(match.group(1), match.group(2).strip(), package.describe()))
    return found


def _require(requirement: Requirement, machine: Sequence[VirtualPackage]) -> None:
    have = machine_version(machine, requirement.virtual)
    if have is None:
        if requirement.virtual == "__cuda":
            raise BadInputError(
                f"{requirement.needed_by} needs a CUDA driver but {_NO_DRIVER}; {_OVERRIDE_HINT}"
            )
        raise BadInputError(
            f"{requirement.needed_by} needs {requirement.virtual} but this machine has none "
            "(not a glibc Linux?); use a matching platform"
        )
    if requirement.constraint and not _satisfies(requirement.constraint, have):
        override = "CONDA_OVERRIDE_CUDA" if requirement.virtual == "__cuda" else "CONDA_OVERRIDE_GLIBC"
        raise BadInputError(
            f"{requirement.needed_by} needs {requirement.virtual} {requirement.constraint} but this machine "
            "has "
            f"{requirement.virtual} {have}; use an older build, a newer machine, or set {override} to build "
            "for "
            "another machine"
        )


def _cpu_on_gpu(
    packages: Sequence[Package], machine: Sequence[VirtualPackage], requested: Sequence[str]
) -> list[str]:
    driver = machine_version(machine, "__cuda")
    if driver is None:
        return []
    facts = facts_from_packages(make_environment(kind="prefix", packages=packages))
    if facts.accelerator != "cpu":
        return []
    asked = facts_from_specs(
        Environment(kind="environment.yml", requested=tuple(RequestedSpec("conda", s) for s in requested))
    )
    if asked.accelerator == "cpu":
        return []
    framework = {"pytorch": "pytorch", "tf": "tensorflow", "jax": "jaxlib"}[facts.framework]
    chosen = next((p.describe() for p in packages if p.name in (framework, "torch")), framework)
    cuda = _asked_cuda(requested) or driver
    return [
        f"the solver chose a CPU build ({chosen}) although this machine has a GPU (driver CUDA {driver}); "
        f"ask for a CUDA build explicitly (e.g. `pytorch-cuda={cuda}` or `{framework}=*=*cuda*`) — see "
        "conda#14761"
    ]


def _asked_cuda(requested: Sequence[str]) -> str | None:
    """The CUDA version the request names (`pytorch-cuda=11.8`, `pytorch=*=*cuda11.8*`), if any."""
    for spec in requested:
        match = re.match(r"\s*pytorch-cuda\s*[=<>~!]*\s*(\d+\.\d+)", spec) or re.search(
            r"cuda(\d+\.\d+)", spec
        )
        if match:
            return match.group(1)
    return None


def _cuda_of(name: str, version: str, build: str) -> str:
    if name in ("pytorch-cuda", "__cuda"):
        match = re.search(r"(\d+(?:\.\d+)?)", version)
        return match.group(1) if match else ""

    return cuda_from_build(build) or ""


def _major(version: str) -> int:
    match = re.match(r"\d+", version)
    return int(match.group(0)) if match else 0


def _satisfies(constraint: str, version: str) -> bool:
    name = "__virtual"
    return conda_matches(f"{name} {constraint}", Package("conda", name, version), check_channel=False)
