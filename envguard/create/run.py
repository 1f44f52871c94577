"""`envguard create` logic: read what is asked, check the machine can run it, solve, name, install, register,
lock, and optionally register a Jupyter kernel. Returns a CreateResult; the command renders it.

The same planning path answers `envguard name` (the name a source would get), so the two never disagree.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from envguard.channels import merge as merge_channels
from envguard.channels import strip_credentials
from envguard.create import jupyter as jupyter_mod
from envguard.create import machine_check, naming
from envguard.create.naming import suggest
from envguard.engine import pip_install
from envguard.engine import target as targets
from envguard.engine.backends.base import Backend, Plan, Request
from envguard.engine.install import Alongside, Fetched, default_pkgs_dir, fetch, install, integrity_message
from envguard.errors import (
    BackendError,
    BadInputError,
    NoPlatformEntry,
    OperationalError,
    UsageError,
)
from envguard.export import replaced_warning, tracked_by_git
from envguard.formats import envyml, read_file
from envguard.formats.condalock.write import input_hash, render_lock, write_lock
from envguard.lock import yml_line
from envguard.machine import virtual
from envguard.model import Environment, Package, RequestedSpec, VirtualPackage, make_environment
from envguard.prefix.condaconfig import envs_dirs, register, registered_environments
from envguard.prefix.lockref import remember
from envguard.prefix.reader import read_prefix
from envguard.sources import ALLOW_SELF, envguard_inside
from envguard.specs import parse_conda


@dataclass(frozen=True)
class CreateInput:
    """What the user asked for, from `-f environment.yml`, `--lock FILE` or SPEC arguments."""

    kind: str
    origin: str
    env: Environment
    specs: tuple[str, ...]
    channels: tuple[str, ...]
    locked: tuple[Package, ...] = ()
    path: Path | None = None


@dataclass(frozen=True)
class Planned:
    """A solved (or locked) request, the machine it was checked against, and the name it gets."""

    source: CreateInput
    request: Request
    plan: Plan
    machine: tuple[VirtualPackage, ...]
    name: str
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class CreateResult:
    """What `create` did (or would do with --dry-run)."""

    name: str
    prefix: str
    backend: str
    platform: str
    packages: tuple[Package, ...]
    requested: tuple[str, ...]
    channels: tuple[str, ...]
    dry_run: bool = False
    replaced: bool = False
    registered: bool = False
    lock: str | None = None
    kernelspec: str | None = None
    warnings: tuple[str, ...] = ()


def read_source(
    file: str | None, lock: str | None, specs: Sequence[str], channels: Sequence[str], platform: str
) -> CreateInput:
    """Exactly one of -f / --lock / SPEC...; -c channels come first, then the file's own."""
    given = [bool(file), bool(lock), bool(specs)]
    if sum(given) != 1:
        raise UsageError(
            "say what to create: -f environment.yml, --lock FILE, or package specs (exactly one)"
        )
    if file:
        path = _existing(file)
        env = envyml.read(path, platform=platform)
        conda = tuple(r.spec for r in env.requested if r.manager == "conda")
        return CreateInput(
            "environment.yml", str(path), env, conda, merge_channels(channels, env.channels), path=path
        )
    if lock:
        path = _existing(lock)
        try:
            env = read_file(path, platform=platform)
        except NoPlatformEntry as exc:  # create has no --platform: it installs for this machine
            raise exc.this_machine() from exc
        if env.spec_only or not env.conda_packages():
            raise BadInputError(
                f"{path}: no locked conda packages for {platform}; give a lock (conda-lock.yml, "
                "explicit spec, pixi.lock) or use -f for an environment.yml"
            )
        conda = tuple(r.spec for r in env.requested if r.manager == "conda")
        return CreateInput(
            env.kind, str(path), env, conda, merge_channels(channels, env.channels), env.packages, path
        )

    for spec in specs:
        parse_conda(spec, "command line")
    if not channels:
        raise UsageError(
            f"no channel to take {', '.join(specs)} from: pass -c CHANNEL (e.g. -c conda-forge), or use "
            "-f environment.yml with its `channels:`"
        )
    requested = tuple(RequestedSpec("conda", s) for s in specs)
    env = make_environment(kind="environment.yml", source="command line", requested=requested)
    return CreateInput("specs", "command line", env, tuple(specs), tuple(channels))


def plan(
    source: CreateInput,
    backend: Backend,
    platform: str,
    *,
    name: str | None = None,
    prefix: Path | None = None,
) -> Planned:
    """Check the request against this machine, solve it (or take the lock as is) and name the result."""
    machine = virtual.detect()
    warnings = list(source.env.warnings)
    warnings += machine_check.check_request(source.specs, machine, source.origin)
    request = Request(source.specs, source.channels, platform, machine, source.locked, source.origin)
    solved = backend.solve(request)
    warnings += machine_check.check_plan(solved.packages, machine, source.specs, solved=not source.locked)
    resolved = make_environment(
        kind="prefix",
        packages=(*solved.packages, *_pip(source)),
        requested=source.env.requested,
        python=_python(solved.packages),
    )
    chosen = name or (prefix.name if prefix is not None else naming.semantic_name(resolved))
    if source.env.name and not name and prefix is None and source.env.name != chosen:
        warnings.append(
            f"{source.origin} names the environment {source.env.name!r}; envguard uses the semantic "
            f"name {chosen!r} (pass --name {source.env.name} to keep yours)"
        )
    return Planned(source, request, solved, machine, chosen, tuple(warnings))


def create(
    planned: Planned,
    backend: Backend,
    *,
    prefix: Path | None,
    force: bool,
    dry_run: bool,
    jupyter: bool,
    write_lock: bool = True,
    alongside: Alongside = None,
) -> CreateResult:
    """Install the planned environment into conda's envs dir (or --prefix), register it, lock it, add a
    kernel. `alongside` starts when the engine does (Backend.install), unless nothing is installed."""
    name = planned.name if prefix is not None else naming.validate(planned.name)
    target = (prefix or envs_dir() / name).expanduser().absolute()
    result = CreateResult(
        name=name,
        prefix=str(target),
        backend=backend.describe(),
        platform=planned.request.platform,
        packages=planned.plan.packages,
        requested=planned.source.specs,
        channels=planned.request.channels,
        dry_run=dry_run,
        warnings=planned.warnings,
    )
    if dry_run:
        replaced = _collision(target, name, force, by_name=prefix is None)
        return dataclasses.replace(result, replaced=replaced)

    # every decision about the target is taken holding its lock: a second create of it waits, then refuses
    with targets.hold(target) as held:
        replaced = _collision(target, name, force, by_name=prefix is None)
        with targets.changing(held, replace=replaced):  # the old env is intact until the new one is complete
            installed, warnings, lock = _build(planned, backend, target, write_lock, alongside)
            # the environment follows the lock it was made from, or the one written for it (prefix.lockref)
            followed = planned.source.path if planned.source.locked else lock
            if followed is not None:
                remember(target, followed)
            kernel = None
            if jupyter:
                kernel_path, warning = jupyter_mod.install_kernelspec(target, name)
                kernel = str(kernel_path)
                warnings += [warning] if warning else []
    return dataclasses.replace(
        result,
        packages=installed.packages,
        replaced=replaced,
        registered=True,
        lock=str(lock) if lock else None,
        kernelspec=kernel,
        warnings=(*held.recovered, *warnings),
    )


def _build(
    planned: Planned, backend: Backend, target: Path, write_lock: bool, alongside: Alongside = None
) -> tuple[Plan, list[str], Path | None]:
    """Install (conda, then pip), register, and write the lock beside the environment.yml."""
    wants_lock = write_lock and planned.source.kind == "environment.yml"
    from_plan = wants_lock and _lockable(planned)
    with ThreadPoolExecutor(max_workers=1) as pool:
        early: list[Future[str]] = []

        def start() -> None:
            # The lock is rendered from the plan while the engine links (rattler links without the GIL);
            # started then, not before, so it does not compete with this thread's own Python work.
            if from_plan:
                early.append(pool.submit(lock_text, planned, planned.plan.packages))
            if alongside is not None:
                alongside()

        pip_archives = _fetch_pip(planned)  # proven against the lock before anything is installed
        installed = _install(backend, target, planned, start)
        warnings = list(planned.warnings) + _install_pip(planned, target, pip_archives)
        try:
            register(target)
        except OperationalError as exc:  # a read-only ~/.conda: conda warns and keeps the environment
            warnings.append(str(exc))
        if from_plan:
            text = early[0].result() if early else lock_text(planned, planned.plan.packages)
        else:
            text = lock_text(planned, _installed(target)) if wants_lock else ""
    if not text:
        return installed, warnings, None
    lock = planned.source.path.parent / "conda-lock.yml" if planned.source.path else None
    if lock is not None and lock.is_file() and lock.read_text(encoding="utf-8", errors="replace") != text:
        warnings.append(
            replaced_warning(str(lock), anywhere=True) + " (--no-lock keeps it)"
            if tracked_by_git(lock)
            else f"replaced the existing {lock} with the lock of what was installed (--no-lock keeps it)"
        )
    return installed, warnings, write_lock_beside(planned, text)


def _fetch_pip(planned: Planned) -> Fetched | None:
    """A lock's pip archives, fetched and hashed (a mismatch stops create before the conda install)."""
    locked = [p for p in planned.source.locked if p.manager == "pip"]
    if not locked:
        return None

    fetched = fetch(locked, default_pkgs_dir())
    if fetched.mismatches:
        raise BackendError(f"{planned.source.origin}: {integrity_message(fetched.mismatches)}")
    return fetched


def _install_pip(planned: Planned, target: Path, fetched: Fetched | None) -> list[str]:
    """The environment.yml's `pip:` lines (conda env create does the same), or a lock's pip packages."""
    source = planned.source
    if fetched is not None:
        return install(fetched, target, specs=(), platform=None, pkgs_dir=default_pkgs_dir())
    requirements = tuple(r.spec for r in source.env.requested if r.manager == "pip")
    if requirements:
        folder = source.path.parent if source.path else None
        pip_install.pip_install(target, requirements, source.env.pip_options, cwd=folder)
    return []


def _install(backend: Backend, target: Path, planned: Planned, alongside: Alongside = None) -> Plan:
    return backend.install(target, planned.request, planned.plan, alongside=alongside)


def envs_dir() -> Path:
    """Where named environments go: the first writable of conda's envs dirs (condarc `envs_dirs`,
    CONDA_ENVS_PATH, ~/.conda/envs)."""
    candidates = envs_dirs()
    for folder in candidates:
        probe = folder
        while not probe.exists() and probe.parent != probe:
            probe = probe.parent
        if os.access(probe, os.W_OK):
            return folder
    raise BadInputError(
        f"none of conda's envs dirs is writable ({', '.join(map(str, candidates))}); "
        "set CONDA_ENVS_PATH or pass --prefix DIR"
    )


def name_taken(name: str) -> Path | None:
    """An existing environment (or folder) that already uses `name`."""
    for folder in envs_dirs():
        if (folder / name).exists():
            return folder / name
    return next((p for p in registered_environments() if p.name == name), None)


def _collision(target: Path, name: str, force: bool, *, by_name: bool) -> bool:
    """True when an existing environment will be replaced (--force); refuse otherwise."""
    if os.path.lexists(target) and not os.path.isdir(target):
        raise UsageError(f"{target} exists and is not a conda environment (a file); give another --prefix")
    existing = (
        target if target.exists() and any(target.iterdir()) else (name_taken(name) if by_name else None)
    )
    if existing is None:
        return False
    if not force:
        hint = (
            f"--name {suggest(name, lambda n: name_taken(n) is not None)}" if by_name else "another --prefix"
        )
        raise UsageError(
            f"an environment named {name!r} already exists at {existing}; use {hint}, or --force "
            "to replace it"
        )
    if existing != target:
        raise UsageError(
            f"{name!r} is already used by {existing} (outside {target.parent}); pick another --name"
        )
    own = envguard_inside(target)
    if own is not None and os.environ.get(ALLOW_SELF) != "1":
        raise UsageError(
            f"{target}: holds {own}; --force would replace it and remove the envguard that is running; "
            f"create the environment at another path, or set {ALLOW_SELF}=1 to replace it anyway"
        )
    if not (target / "conda-meta").is_dir():
        raise UsageError(
            f"{target} exists and is not a conda environment; refusing to replace it even with --force"
        )
    return True


def _lockable(planned: Planned) -> bool:
    """The plan alone makes the lock: every package carries its URL and hash, and no pip step follows."""
    pip = any(r.manager == "pip" for r in planned.source.env.requested)
    return not pip and all(p.url and (p.sha256 or p.md5) for p in planned.plan.packages)


def _installed(prefix: Path) -> tuple[Package, ...]:
    return read_prefix(prefix).packages


def lock_text(planned: Planned, packages: Sequence[Package]) -> str:
    """conda-lock.yml text for what was installed, hashed for the environment.yml's inputs."""
    assert planned.source.path is not None
    platform, yml = planned.request.platform, planned.source.path.name
    env = make_environment(
        kind="conda-lock",
        source=yml,
        platform=platform,
        python=_python(packages),
        channels=tuple(strip_credentials(c) for c in planned.request.channels),
        packages=packages,
        virtual_packages=planned.machine,
    )
    cuda = next((v.version for v in planned.machine if v.name == "__cuda"), None)
    target = planned.source.path.parent / "conda-lock.yml"
    return render_lock(  # as `lock -f` renders it: the same header for the same solve
        {platform: env},
        sources=[yml],
        content_hashes={platform: input_hash(planned.source.env, platform, planned.machine)},
        channels=env.channels,
        source_kind="environment.yml",
        reproduce=yml_line(planned.source.path, str(target), [platform], cuda, not cuda),
        lock_name=target.name,
    )


def write_lock_beside(planned: Planned, text: str) -> Path:
    """Write conda-lock.yml beside the environment.yml (atomically)."""
    assert planned.source.path is not None
    return write_lock(planned.source.path.parent / "conda-lock.yml", text)


def _existing(value: str) -> Path:
    path = Path(value).expanduser()
    if not os.path.isfile(path):  # os.path: a name too long for the file system is no file either
        raise BadInputError(f"{value}: no such file; check the path")
    return path


def _pip(source: CreateInput) -> tuple[Package, ...]:
    return tuple(p for p in source.locked if p.manager == "pip")


def _python(packages: Sequence[Package]) -> str | None:
    return next((p.version for p in packages if p.name == "python" and p.manager == "conda"), None)
