"""Semantic environment names derived from content (`pytorch2.1-cuda118-py311`), and name validation.

Rules (documented in the README):
- framework and major.minor version: `pytorch` (conda pytorch / pip torch), else `tf` (tensorflow), else
  `jax`;
- accelerator, in each framework's own vocabulary: pytorch `cuda118` / `cpu` / `rocm`, tensorflow `gpu` /
  `cpu`,
  jax `cuda12` / `cpu` (omitted when it cannot be told);
- python: `py311`;
- no framework: `py311-<6 hex of a content hash>` (`env-<hash>` without python). The hash covers the requested
  conda specs when the source has them (so an environment.yml and the environment created from it agree),
  else the resolved package list.
Pure functions over the model; no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from envguard.cuda import cuda_from_build
from envguard.errors import UsageError
from envguard.model import Environment, Manager, Package
from envguard.specs import parse_conda, pip_name

MAX_LENGTH = 64
RESERVED = frozenset({"base", "root", "envs", "pkgs"})
_VALID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")
_JAX_CUDA = re.compile(r"cuda(\d{2})")
_PIN = re.compile(r"^\s*(?:==|=)?\s*(\d+(?:\.\d+)*)(?:\.\*|\*)?\s*$")

TORCH = ("pytorch", "torch", "pytorch-gpu", "pytorch-cpu")
TENSORFLOW = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-base")
JAX = ("jax", "jaxlib")
MANAGERS: tuple[Manager, ...] = ("conda", "pip")


@dataclass(frozen=True, slots=True)
class NameFacts:
    """What a name is made of; empty strings are left out."""

    framework: str = ""
    version: str = ""
    accelerator: str = ""
    python: str = ""


def semantic_name(env: Environment) -> str:
    """The name for an environment: from resolved packages when it has them, else from its requested specs."""
    facts = facts_from_specs(env) if env.spec_only or not env.packages else facts_from_packages(env)
    return compose(facts, content_hash(env))


def compose(facts: NameFacts, digest: str) -> str:
    """Join the facts into a name: `pytorch2.1-cuda118-py311`, or `py311-<digest>` without a framework."""
    if facts.framework:
        parts = [facts.framework + facts.version, facts.accelerator, facts.python]
    else:
        parts = [facts.python or "env", digest]
    return "-".join(p for p in parts if p)[:MAX_LENGTH]


def content_hash(env: Environment) -> str:
    """6 hex chars over the canonical requested conda specs, or over the packages when nothing was
    requested."""
    requested = sorted(parse_conda(r.spec).canonical() for r in env.requested if r.manager == "conda")
    lines = requested or sorted(f"{p.manager}:{p.name}={p.version}={p.build}" for p in env.packages)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:6]


# --- from resolved packages -------------------------------------------------------------------------------


def facts_from_packages(env: Environment) -> NameFacts:
    python = _py_tag(env.python or _version_of(env, "python"))
    torch = _first(env, TORCH)
    if torch is not None:
        return NameFacts("pytorch", _major_minor(torch.version), _torch_accelerator(env), python)
    tf = _first(env, TENSORFLOW)
    if tf is not None:
        return NameFacts("tf", _major_minor(tf.version), _tf_accelerator(env, tf), python)
    jax = _first(env, ("jax",)) or _first(env, ("jaxlib",))
    if jax is not None:
        return NameFacts("jax", _major_minor(jax.version), _jax_accelerator(env), python)
    return NameFacts(python=python)


def _torch_accelerator(env: Environment) -> str:
    summary = env.cuda
    if summary.torch_build == "cuda":
        digits = (summary.torch_cuda or summary.toolkit or "").replace(".", "")
        return f"cuda{digits}"
    if summary.torch_build in ("cpu", "rocm"):
        return summary.torch_build
    return ""


def _tf_accelerator(env: Environment, tf: Package) -> str:
    gpu_build = "cuda" in tf.build.lower() or tf.name == "tensorflow-gpu"
    nvidia_wheels = any(p.manager == "pip" and p.name.startswith("nvidia-") for p in env.packages)
    return "gpu" if gpu_build or nvidia_wheels else "cpu"


def _jax_accelerator(env: Environment) -> str:
    jaxlib = _first(env, ("jaxlib",))
    if jaxlib is not None:
        match = _JAX_CUDA.search(jaxlib.build.lower() + jaxlib.version.lower())
        if match:
            return f"cuda{match.group(1)}"
    plugin = next((p for p in env.packages if re.match(r"jax-cuda(\d+)-plugin$", p.name)), None)
    if plugin is not None:
        return "cuda" + re.sub(r"\D", "", plugin.name)
    return "cpu" if jaxlib is not None else ""


# --- from requested specs (an environment.yml without solving) -------------------------------------------


def facts_from_specs(env: Environment) -> NameFacts:
    """Infer the facts from what was asked; accelerators only when the specs say (a build glob, pytorch-cuda,
    cudatoolkit, cuda-version, cpuonly)."""
    specs = {}
    for request in env.requested:
        if request.manager == "conda":
            parsed = parse_conda(request.spec)
            specs[parsed.name] = (parsed.version or "", parsed.build or "")
        elif (name := pip_name(request.spec)) is not None:
            pinned = re.search(r"==\s*([\w.]+)", request.spec)
            specs.setdefault(name, (pinned.group(1) if pinned else "", ""))
    python = _py_tag(env.python or _pinned(specs.get("python", ("", ""))[0]))
    cuda = _requested_cuda(specs)
    for framework, names in (("pytorch", TORCH), ("tf", TENSORFLOW), ("jax", JAX)):
        name = next((n for n in names if n in specs), None)
        if name is None:
            continue
        version, build = specs[name]
        return NameFacts(
            framework, _pinned(version), _spec_accelerator(framework, build, cuda, specs), python
        )
    return NameFacts(python=python)


def _requested_cuda(specs: dict[str, tuple[str, str]]) -> str:
    for name in ("pytorch-cuda", "cuda-version", "cudatoolkit", "cuda-runtime", "cuda-cudart"):
        if name in specs and _pinned(specs[name][0]):
            return _pinned(specs[name][0])

    return next((found for _version, build in specs.values() if (found := cuda_from_build(build))), "")


def _spec_accelerator(framework: str, build: str, cuda: str, specs: dict[str, tuple[str, str]]) -> str:
    cpu = "cpuonly" in specs or "cpu" in build.lower() or (framework == "tf" and "tensorflow-cpu" in specs)
    if cpu:
        return "cpu"
    wants_gpu = bool(cuda) or "cuda" in build.lower() or "tensorflow-gpu" in specs
    if not wants_gpu:
        return ""
    if framework == "tf":
        return "gpu"
    if framework == "jax":
        return f"cuda{cuda.split('.')[0]}" if cuda else "cuda"
    return "cuda" + cuda.replace(".", "")


# --- validation ------------------------------------------------------------------------------------------


def validate(name: str) -> str:
    """Return `name` if it is a portable environment name, else raise a UsageError saying what is allowed."""
    rules = (
        "use letters, digits, '.', '_' and '-', start with a letter, digit or '_', "
        f"at most {MAX_LENGTH} characters"
    )
    if not name or name in (".", ".."):
        raise UsageError(f"environment name {name!r} is empty or a relative folder; {rules}")
    if "/" in name or "\\" in name or ":" in name:
        raise UsageError(
            f"environment name {name!r} contains a path separator; {rules} (or use --prefix DIR)"
        )
    if name.startswith("-"):
        raise UsageError(f"environment name {name!r} starts with '-' and would read as an option; {rules}")
    if len(name) > MAX_LENGTH:
        raise UsageError(f"environment name {name[:20]!r}... is {len(name)} characters long; {rules}")
    if not _VALID.fullmatch(name):  # fullmatch: `$` would accept a trailing newline
        raise UsageError(f"environment name {name!r} has characters that are not portable; {rules}")
    if name.lower() in RESERVED:
        raise UsageError(f"environment name {name!r} is reserved by conda; choose another name")
    return name


def suggest(name: str, taken: Callable[[str], bool]) -> str:
    """The first `name-2`, `name-3`... for which `taken(candidate)` is false."""
    for number in range(2, 1000):
        suffix = f"-{number}"
        candidate = name[: MAX_LENGTH - len(suffix)] + suffix
        if not taken(candidate):
            return candidate
    return name + "-new"


# --- helpers ---------------------------------------------------------------------------------------------


def _first(env: Environment, names: tuple[str, ...]) -> Package | None:
    for name in names:
        for manager in MANAGERS:
            package = env.get(name, manager)
            if package is not None:
                return package
    return None


def _version_of(env: Environment, name: str) -> str:
    package = env.get(name)
    return package.version if package else ""


def _major_minor(version: str) -> str:
    match = _VERSION.match(version.split("+", 1)[0])
    if not match:
        return ""
    return f"{match.group(1)}.{match.group(2)}" if match.group(2) else match.group(1)


def _pinned(version: str) -> str:
    """major.minor of a spec that pins a version (`2.1`, `=2.1`, `2.1.*`, `==2.1.0`); '' for ranges."""
    match = _PIN.match(version or "")
    return _major_minor(match.group(1)) if match else ""


def _py_tag(version: str) -> str:
    match = _VERSION.match(version or "")
    if not match or not match.group(2):
        return ""
    return f"py{match.group(1)}{match.group(2)}"
