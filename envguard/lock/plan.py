"""Build what `envguard lock` writes: resolved environments per platform and their input hashes.

From a live environment: the exact installed set (conda and pip), its virtual packages and fingerprints, no
solving. From an environment.yml: a py-rattler solve per platform with that platform's virtual packages;
`__cuda` only when the user says so (`--cuda VER`), and a clear error when the specs need CUDA and nobody
said.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from envguard.cache import parsed as parsecache
from envguard.channels import merge
from envguard.engine.solver import format_date, new_gateway, solve
from envguard.errors import BadInputError, EnvguardError, UsageError
from envguard.formats import envyml, localsource
from envguard.formats.condalock.write import input_hash
from envguard.formats.localsource import local_path
from envguard.machine.platform import current_platform, default_virtual_packages
from envguard.model import LOCAL_ORIGIN, Environment, Package, RequestedSpec, VirtualPackage, make_environment
from envguard.output import progress_wanted, waiting
from envguard.prefix.probe import SKIP_WITH_NO_PROBE, run_probe, skip_hint
from envguard.specs import canonical_name, parse_conda, pip_name
from envguard.textio import read_text

CudaChoice = str | Literal[False] | None  # a version, False for --no-cuda, None when neither was given
_CUDA_NAMES = re.compile(r"^(cuda|cudatoolkit|cudnn|nccl|pytorch-cuda|cupy|jaxlib-cuda)", re.IGNORECASE)


@dataclass(frozen=True)
class LockPlan:
    """Resolved environments per platform, with everything render_lock needs."""

    envs: dict[str, Environment]
    content_hashes: dict[str, str]
    channels: tuple[str, ...]
    source_kind: str
    warnings: tuple[str, ...] = ()
    exclude_newer: str | None = None  # solved as of this UTC time (`2024-06-01T00:00:00Z`)
    platforms_from_file: bool = False  # the environment.yml's `platforms:` chose them (no --platform given)


def from_live(env: Environment) -> LockPlan:
    """Lock a live environment exactly as installed (already read, optionally probed)."""
    platform = env.platform or "unknown"
    digest = input_hash(env, platform, env.virtual_packages)
    return LockPlan({platform: env}, {platform: digest}, env.channels, "prefix", env.warnings)


def from_environment_yml(
    path: Path,
    platforms: Sequence[str],
    cuda: CudaChoice,
    exclude_newer: datetime.datetime | None = None,
    given: Sequence[str] = (),
) -> LockPlan:
    """Solve an environment.yml for every platform (selectors applied per platform); no `platforms`: the
    file's `platforms:`, else this machine's; `given` channels (-c) go before the file's own. `exclude_newer`:
    solve as of that UTC time; solved packages whose records carry no timestamp (so the date could not apply
    to them) are named in a warning."""
    envs: dict[str, Environment] = {}
    hashes: dict[str, str] = {}
    warnings: list[str] = []
    channels: tuple[str, ...] = ()
    text = read_text(path)  # read once; parsed once unless `# [selector]` lines make platforms differ
    uniform = _selectors(text) == 0  # any selector line counts
    parsed = None
    from_file = False
    if not platforms:  # the file's `platforms:` (read with this machine's selectors), else this machine
        parsed = _parse(text, path, None)
        from_file = bool(parsed.platforms)
        platforms = sorted(set(parsed.platforms)) or [current_platform()]
    elif uniform:
        parsed = _parse(text, path, platforms[0])
    if not uniform:
        parsed = None  # each platform gets its own selectors
    gateway: list[Any] = []  # one rattler Gateway for every platform's solve, made by the first one
    for platform in platforms:
        specs = _parse(text, path, platform) if parsed is None else parsed
        specs = dataclasses.replace(specs, platform=platform, channels=merge(given, specs.channels))
        warnings.extend(w for w in specs.warnings if w not in warnings)
        virtual = _virtual_for(specs, platform, cuda, path)
        solved, undated = _solve(specs, platform, virtual, cuda, path, gateway, exclude_newer)
        if undated:
            warnings.append(
                f"{platform}: {', '.join(undated)}: no timestamp in the channel's records, so "
                f"--exclude-newer {format_date(exclude_newer) if exclude_newer else ''} could not apply to "
                "them (solved as if published before it)"
            )
        pip = pinned_pip_packages(specs.requested, path)
        envs[platform] = make_environment(
            kind="conda-lock",
            source=str(path),
            name=specs.name,
            platform=platform,
            python=_python(solved),
            channels=tuple(c for c in specs.channels if c != "nodefaults"),
            packages=(*solved, *pip),
            virtual_packages=virtual,
        )
        hashes[platform] = input_hash(specs, platform, virtual)
        channels = tuple(
            c for c in specs.channels if c != "nodefaults"
        )  # a solver directive; conda-lock drops it
    date = format_date(exclude_newer) if exclude_newer is not None else None
    return LockPlan(
        envs,
        hashes,
        channels,
        "environment.yml",
        tuple(warnings),
        exclude_newer=date,
        platforms_from_file=from_file,
    )


def _selectors(text: str) -> int:
    """How many `# [selector]` lines the file has (none without a `#` and a `[`: no need to read it line by
    line)."""
    if "#" not in text or "[" not in text:
        return 0

    return envyml.apply_selectors(text, current_platform())[1]


def _parse(text: str, path: Path, platform: str | None) -> Environment:
    """The environment.yml's specs for `platform` (None: this machine's selectors), parsed once per exact
    content: a file locked again unchanged is read from envguard's parse cache, without PyYAML."""

    def parse() -> Environment:
        return envyml.parse(text, str(path), platform=platform)

    data = text.encode("utf-8", "surrogatepass")
    key = f"environment.yml\0{platform or current_platform()}"  # a shared cache folder: NFS homes
    return parsecache.parsed(data, key, str(path), parse)


def needs_cuda(requested: Sequence[RequestedSpec]) -> str | None:
    """The first spec that asks for CUDA by name or build (`pytorch-cuda`, `pytorch=*=*cuda*`, `+cu121`)."""
    for request in requested:
        if request.manager == "conda":
            parsed = parse_conda(request.spec)
            if _CUDA_NAMES.match(parsed.name) or "cuda" in (parsed.build or "").lower():
                return request.spec
        elif "+cu" in request.spec or re.match(r"nvidia-.*-cu\d+", pip_name(request.spec) or ""):
            return request.spec
    return None


def _virtual_for(
    specs: Environment, platform: str, cuda: CudaChoice, path: Path
) -> tuple[VirtualPackage, ...]:
    if cuda is None:
        wanted = needs_cuda(specs.requested)
        if wanted:
            raise UsageError(_cuda_message(path, platform, f"`{wanted}` asks for CUDA"))
    return default_virtual_packages(platform, cuda or None)


def _cuda_message(path: Path, platform: str, why: str) -> str:
    return (
        f"{path}: {why} on {platform}, but no CUDA driver version was given; pass --cuda VERSION (e.g. "
        "--cuda "
        "12.1) to lock for GPU machines, or --no-cuda to lock CPU builds (envguard never assumes a GPU)"
    )


def _solve(
    specs: Environment,
    platform: str,
    virtual: Sequence[VirtualPackage],
    cuda: CudaChoice,
    path: Path,
    gateway: list[Any],
    exclude_newer: datetime.datetime | None = None,
) -> tuple[tuple[Package, ...], tuple[str, ...]]:
    """The solved packages and, with `exclude_newer`, the names of those that carry no timestamp."""
    conda = [r.spec for r in specs.requested if r.manager == "conda"]
    if not conda:
        return (), ()

    if not gateway:
        gateway.append(new_gateway())
    try:
        with waiting(f"solving {len(conda)} spec(s) for {platform}", progress_wanted()):
            result = solve(
                conda, specs.channels, platform, virtual, gateway=gateway[0], exclude_newer=exclude_newer
            )
    except BadInputError as exc:
        if cuda is None and "__cuda" in str(exc):
            raise UsageError(
                _cuda_message(path, platform, "the solve needs the __cuda virtual package")
            ) from exc
        raise BadInputError(f"{path}: {exc}") from exc
    return result.packages, result.undated


def _python(packages: Sequence[Package]) -> str | None:
    return next((p.version for p in packages if p.name == "python"), None)


def pinned_pip_packages(requested: Sequence[RequestedSpec], path: Path) -> tuple[Package, ...]:
    """pip lines pinned exactly (`name==1.2.3`) become pip lock entries without hashes (nothing is
    downloaded); any other pip line cannot be locked offline and is bad input saying what to do."""
    pip = [request for request in requested if request.manager == "pip"]
    if not pip:
        return ()  # packaging (~20 ms to import) only where there is a pip line to read
    from packaging.requirements import InvalidRequirement, Requirement

    result = []
    for request in pip:
        try:
            requirement = Requirement(request.spec)
        except InvalidRequirement:
            requirement = None
        specifiers = list(requirement.specifier) if requirement else []
        exact = (
            requirement is not None
            and not requirement.url
            and not requirement.marker
            and len(specifiers) == 1
            and specifiers[0].operator in ("==", "===")
            and "*" not in specifiers[0].version
        )
        if not exact or requirement is None:
            raise BadInputError(
                f"{path}: pip requirement {request.spec!r} cannot be locked without installing it; pin it as "
                "`name==VERSION`, or install the environment and lock it live (`envguard lock PREFIX`)"
            )
        result.append(Package("pip", canonical_name(requirement.name), specifiers[0].version))
    return tuple(result)


def probe_into(env: Environment, prefix: Path) -> tuple[Environment, str | None]:
    """The environment with fingerprints from its own interpreter, or unchanged plus a warning when the probe
    cannot run (no python in the environment, a broken numpy...)."""
    try:
        with (
            waiting(f"probing RNG fingerprints with {prefix}'s python", progress_wanted()),
            skip_hint(SKIP_WITH_NO_PROBE),
        ):
            fingerprints = run_probe(prefix)
        return dataclasses.replace(env, fingerprints=fingerprints), None
    except EnvguardError as exc:
        return (
            env,
            f"no RNG fingerprints recorded ({exc}); `envguard check --rng` will not work with this lock",
        )


def local_paths(env: Environment, base: Path, include_local: bool) -> tuple[Environment, tuple[str, ...]]:
    """The environment as a lock written in the folder `base` records its pip packages' local paths, and the
    names of those it leaves unrecorded. A project installed from a folder (`pip install .`, `-e .`) is
    recorded relative to `base` (envguard.formats.localsource): the lock means the same checkout wherever it
    is cloned. Any other local path (a wheel or sdist file on this machine's disk) is replaced by
    LOCAL_ORIGIN unless `include_local`: the lock is for other machines, where the path means nothing, and it
    would tell them where your files are."""
    names: list[str] = []
    packages = []
    for package in env.packages:
        origin = package.origin
        path = local_path(origin.url) if package.manager == "pip" and origin is not None else None
        if origin is not None and path is not None and origin.url != LOCAL_ORIGIN and not origin.vcs:
            rel = localsource.relative(str(path), str(base)) if path.is_dir() else None
            if rel is not None:
                package = dataclasses.replace(package, url="", origin=dataclasses.replace(origin, url=rel))
            elif not include_local:
                names.append(package.name)
                package = dataclasses.replace(
                    package, url="", origin=dataclasses.replace(origin, url=LOCAL_ORIGIN)
                )
        packages.append(package)
    return dataclasses.replace(env, packages=tuple(packages)), tuple(names)
