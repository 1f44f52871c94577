"""Derive the CUDA picture of an environment from its packages: driver, toolkit, and the torch build kind."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Literal, Protocol


class Package(Protocol):
    """What the CUDA picture reads of a package (envguard.model.Package has it; the model imports this
    module, so this module names the shape instead of importing the model)."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def build(self) -> str: ...
    @property
    def manager(self) -> str: ...


class VirtualPackage(Protocol):
    """A virtual package's name and version (envguard.model.VirtualPackage has them)."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...


TorchBuild = Literal["cuda", "cpu", "rocm", "unknown", "absent"]

TOOLKIT_PACKAGES = ("cuda-version", "cudatoolkit", "cuda-runtime", "cuda-cudart", "pytorch-cuda", "cuda")
TORCH_NAMES = ("pytorch", "torch", "pytorch-gpu", "pytorch-cpu")
_BUILD_CUDA = re.compile(r"cuda[_-]?(\d+)(?:\.(\d+))?")
_LOCAL_CU = re.compile(r"\+cu(\d+)")
_LOCAL_ROCM = re.compile(r"\+rocm(\d+(?:\.\d+)*)")
_PIP_NVIDIA = re.compile(r"^nvidia-[a-z0-9-]+-cu(\d+)$")


@dataclass(frozen=True)
class CudaSummary:
    """CUDA facts derived from packages and virtual packages."""

    driver: str | None = None
    toolkit: str | None = None
    toolkit_source: str | None = None
    torch_build: TorchBuild = "absent"
    torch_cuda: str | None = None
    torch_source: str | None = None


def summarize(packages: Iterable[Package], virtual: Iterable[VirtualPackage] = ()) -> CudaSummary:
    """Driver from `__cuda`; toolkit from the first toolkit package found; torch build from
    builds/versions."""
    pkgs = _only(tuple(packages), _RELEVANT, "nvidia-")  # the toolkit's, torch's, mutex, NVIDIA's wheels
    driver = next((v.version for v in virtual if v.name == "__cuda"), None)
    toolkit, toolkit_source = _toolkit(pkgs)
    build, torch_cuda, torch_source = _torch(pkgs)
    if toolkit is None and torch_cuda is not None:
        toolkit, toolkit_source = torch_cuda, torch_source
    return CudaSummary(
        driver=driver,
        toolkit=toolkit,
        toolkit_source=toolkit_source,
        torch_build=build,
        torch_cuda=torch_cuda,
        torch_source=torch_source,
    )


_RELEVANT = frozenset((*TOOLKIT_PACKAGES, *TORCH_NAMES, "pytorch-mutex", "cpuonly"))
_NAME = attrgetter("name")


def _only(pkgs: tuple[Package, ...], wanted: frozenset[str], prefix: str = "") -> tuple[Package, ...]:
    """The packages named in `wanted` (or starting with `prefix`), in their order: what the CUDA picture or
    the torch family reads. Python passes over 100,000 packages, one per name looked for, were ~0.1 s each;
    the names are read once, in C, and the prefix looked for in one string."""
    names = list(map(_NAME, pkgs))
    if prefix and f"\n{prefix}" in "\n" + "\n".join(names):
        return tuple([p for p, n in zip(pkgs, names, strict=True) if n in wanted or n.startswith(prefix)])
    return tuple([p for p, n in zip(pkgs, names, strict=True) if n in wanted])


def _toolkit(pkgs: tuple[Package, ...]) -> tuple[str | None, str | None]:
    by_name = {p.name: p for p in pkgs if p.manager == "conda"}
    for name in TOOLKIT_PACKAGES:
        if name in by_name and by_name[name].version:
            return _major_minor(by_name[name].version), name
    for pkg in pkgs:
        match = _PIP_NVIDIA.match(pkg.name) if pkg.manager == "pip" else None
        if match and pkg.name.startswith("nvidia-cuda-runtime"):
            return _major_minor(pkg.version), pkg.name
    return None, None


def _torch(pkgs: tuple[Package, ...]) -> tuple[TorchBuild, str | None, str | None]:
    names = {p.name for p in pkgs}
    torch = next((p for p in pkgs if p.name in TORCH_NAMES and p.manager == "conda"), None)
    torch = torch or next((p for p in pkgs if p.name in TORCH_NAMES), None)
    if torch is None:
        return "absent", None, None
    source = f"{torch.manager}:{torch.name}"
    if torch.manager == "pip":
        return (*_pip_torch(torch, pkgs), source)
    build = torch.build.lower()
    match = _BUILD_CUDA.search(build)
    if match:
        return "cuda", _cuda_digits(match.group(1), match.group(2)), source
    if "rocm" in build:
        return "rocm", None, source
    if "cpu" in build or "cpuonly" in names or torch.name == "pytorch-cpu":
        return "cpu", None, source
    mutex = next((p for p in pkgs if p.name == "pytorch-mutex"), None)
    if mutex is not None:
        return ("cpu", None, source) if "cpu" in mutex.build else ("cuda", None, source)
    if torch.name == "pytorch-gpu":
        return "cuda", None, source
    return "unknown", None, source


def _pip_torch(torch: Package, pkgs: tuple[Package, ...]) -> tuple[TorchBuild, str | None]:
    local = _LOCAL_CU.search(torch.version)
    if local:
        return "cuda", _cuda_digits(local.group(1), None)
    rocm = _LOCAL_ROCM.search(torch.version)
    if rocm:
        return "rocm", None
    if "+cpu" in torch.version:
        return "cpu", None
    wheels = [m.group(1) for p in pkgs if p.manager == "pip" and (m := _PIP_NVIDIA.match(p.name))]
    if wheels:
        runtime = next((p for p in pkgs if p.name.startswith("nvidia-cuda-runtime")), None)
        return "cuda", _major_minor(runtime.version) if runtime else wheels[0]
    return "unknown", None


def cuda_from_build(build: str) -> str | None:
    """The CUDA version a build string names (`py311_cuda11.8_0` -> `11.8`, `cuda118h1234_0` -> `11.8`,
    `cuda12` -> `12`), or None: the one place envguard reads conda's CUDA build tags."""
    match = _BUILD_CUDA.search(build.lower())
    return _cuda_digits(match.group(1), match.group(2)) if match else None


def _cuda_digits(major: str, minor: str | None) -> str:
    """`118` -> `11.8`, `121` -> `12.1`, `12` -> `12`; explicit minor wins."""
    if minor is not None:
        return f"{int(major)}.{int(minor)}"
    if len(major) >= 3:
        return f"{int(major[:-1])}.{int(major[-1])}"
    return str(int(major))


def _major_minor(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts[:2])


def describe(summary: CudaSummary) -> str:
    """One line for humans: `driver 12.4, toolkit 11.8 (cudatoolkit), torch cuda 11.8 build`."""
    parts = [f"driver {summary.driver}" if summary.driver else "no driver"]
    if summary.toolkit:
        parts.append(f"toolkit {summary.toolkit} ({summary.toolkit_source})")
    if summary.torch_build != "absent":
        kind = summary.torch_build + (f" {summary.torch_cuda}" if summary.torch_cuda else "")
        parts.append(f"torch {kind} build")
    return ", ".join(parts)


# --- the torch family: torch, torchvision and torchaudio from one release and one build
# ------------------------------------------------------------------------------------------------------

FAMILY = ("torchvision", "torchaudio")
_FAMILY_NAMES = frozenset((*TORCH_NAMES, *FAMILY))
_BUILD_CU = re.compile(r"(?:^|[_-])cu(\d{2,3})(?:[_-]|$)")  # the pytorch channel's `py311_cu121`


@dataclass(frozen=True)
class FamilyMember:
    """One of torch, torchvision, torchaudio: its version, its manager and its build (`cpu`, `cuda 12.1`,
    `rocm`, `default wheel` for a pip wheel without a local tag, `unknown`)."""

    name: str
    version: str
    manager: str
    build: str

    def label(self) -> str:
        via = " (pip)" if self.manager == "pip" else ""
        return f"{self.name} {self.version}{via}"


def torch_family(packages: Iterable[Package]) -> tuple[FamilyMember, ...]:
    """torch and the torchvision/torchaudio installed beside it (torch first); () without torch."""
    pkgs = _only(tuple(packages), _FAMILY_NAMES)
    torch = next((p for p in pkgs if p.name in TORCH_NAMES and p.manager == "conda"), None)
    torch = torch or next((p for p in pkgs if p.name in TORCH_NAMES), None)
    if torch is None:
        return ()
    members = [torch]
    for name in FAMILY:
        member = next((p for p in pkgs if p.name == name and p.manager == "conda"), None)
        member = member or next((p for p in pkgs if p.name == name), None)
        if member is not None:
            members.append(member)
    return tuple(FamilyMember(p.name, p.version, p.manager, _member_build(p)) for p in members)


def family_problems(members: Sequence[FamilyMember]) -> tuple[str, ...]:
    """Why these do not belong together, one sentence each: a release train other than torch's, or another
    build (CPU vs CUDA, another CUDA, a CPU-index wheel beside a default one); () when they agree."""
    if len(members) < 2:
        return ()
    torch, others = members[0], members[1:]
    problems = []
    train = _train(torch.version)
    for member in others:
        wanted = train.get(member.name) if train else None
        if wanted is not None and _major_minor(_public(member.version)) != wanted:
            problems.append(
                f"{member.label()} is not from torch {_major_minor(_public(torch.version))}'s release "
                f"(that is {member.name} {wanted}.x)"
            )
    for member in others:
        if _builds_differ(torch, member):
            problems.append(
                f"{member.label()} is {_build_words(member)}, {torch.label()} {_build_words(torch)}"
            )
    return tuple(problems)


def _train(torch_version: str) -> dict[str, str]:
    """The torchvision and torchaudio major.minor released with this torch (2.m: 0.(m+15) and 2.m; 1.m:
    0.(m+1) and 0.m), or {} for a version outside those trains."""
    parts = _public(torch_version).split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return {}
    major, minor = int(parts[0]), int(parts[1])
    if major == 2:
        return {"torchvision": f"0.{minor + 15}", "torchaudio": f"2.{minor}"}
    if major == 1 and minor >= 5:
        return {"torchvision": f"0.{minor + 1}", "torchaudio": f"0.{minor}"}
    return {}


def _public(version: str) -> str:
    return version.split("+", 1)[0]


def _member_build(package: Package) -> str:
    if package.manager == "pip":
        local = package.version.partition("+")[2].lower()
        if not local:
            return "default wheel"
        if local.startswith("cu") and local[2:].isdigit():
            return f"cuda {_cuda_digits(local[2:], None)}"
        return "rocm" if local.startswith("rocm") else ("cpu" if local == "cpu" else "unknown")
    build = package.build.lower()
    cuda = cuda_from_build(build)
    tagged = _BUILD_CU.search(build)
    if cuda is None and tagged:
        cuda = _cuda_digits(tagged.group(1), None)
    if cuda is not None:
        return f"cuda {cuda}"
    if "rocm" in build:
        return "rocm"
    return "cpu" if "cpu" in build else "unknown"


def _build_words(member: FamilyMember) -> str:
    if member.build == "default wheel":
        return "PyPI's default wheel (a CUDA build on Linux x86-64)"
    if member.build.startswith("cuda"):
        return f"a CUDA {member.build[5:]} build"
    return {"cpu": "a CPU build", "rocm": "a ROCm build"}.get(member.build, f"a {member.build} build")


def _builds_differ(torch: FamilyMember, member: FamilyMember) -> bool:
    if "unknown" in (torch.build, member.build):
        return False
    if "default wheel" in (torch.build, member.build):
        # PyPI's default wheel beside one from a CPU/CUDA index: two indexes, two builds (both pip only:
        # what a conda build corresponds to on PyPI cannot be told)
        return torch.manager == member.manager == "pip" and torch.build != member.build
    return torch.build != member.build


def family_warnings(packages: Iterable[Package], where: str = "") -> tuple[str, ...]:
    """One warning line per reason torch and its family do not belong together (check and lock warn; doctor
    also imports each)."""
    problems = family_problems(torch_family(packages))
    prefix = f"{where}: " if where else ""
    return tuple(
        f"{prefix}torch family: {problem}; install torch, torchvision and torchaudio from one release and "
        "one build (`envguard doctor` checks that each imports)"
        for problem in problems
    )
