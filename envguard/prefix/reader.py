"""Read a live prefix: conda-meta records and history directly (never spawning conda), plus pip dist-infos.

Works for environments made by conda, mamba, micromamba, pixi and rattler, and for plain venvs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from envguard.cache import environments, records
from envguard.errors import BadInputError
from envguard.machine.platform import current_platform
from envguard.model import Environment, Package, RequestedSpec, VirtualPackage, make_environment
from envguard.prefix import history as history_mod
from envguard.prefix.pip_dist import read_pip_packages
from envguard.prefix.records import Slim, read_slim, record_paths
from envguard.specs import spec_name
from envguard.textio import gc_paused, read_bytes


def is_conda_prefix(path: Path) -> bool:
    return (path / "conda-meta").is_dir()


def is_venv(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file()


@gc_paused()
def read_prefix(prefix: Path, virtual_packages: tuple[VirtualPackage, ...] = ()) -> Environment:
    """Snapshot a live conda prefix or venv (no probe). A conda prefix whose stat fingerprint is unchanged
    comes from the whole-environment cache (envguard.cache.environments)."""
    prefix = prefix.expanduser()
    if not os.path.isdir(prefix):  # os.path: a name too long for the file system is no folder either
        raise BadInputError(f"{prefix}: no such environment folder; give a prefix path or name:ENV")
    if is_conda_prefix(prefix):
        return environments.cached(
            lambda: read_conda(prefix, virtual_packages), prefix, virtual_packages, current_platform()
        )
    if is_venv(prefix) or (prefix / "lib").is_dir() or (prefix / "Lib").is_dir():
        return _read_venv(prefix, virtual_packages)
    raise BadInputError(f"{prefix}: neither a conda environment (no conda-meta/) nor a venv (no pyvenv.cfg)")


def read_conda(prefix: Path, virtual: tuple[VirtualPackage, ...] = ()) -> Environment:
    """A conda prefix's Environment: its records (each read again only when it changed:
    envguard.cache.records), history and pip dist-infos."""
    packages: list[Package] = []
    record_specs: dict[str, str] = {}
    subdirs: set[str] = set()
    for slim in records.cached(read_slim, record_paths(prefix), Slim, prefix):
        package, specs = slim.package, slim.requested
        packages.append(package)
        if package.subdir and package.subdir != "noarch":
            subdirs.add(package.subdir)
        for spec in specs:
            record_specs[spec_name(spec)] = spec
    history = _history(prefix)
    requested = dict(record_specs)
    requested.update(history)
    pip, warnings = read_pip_packages(prefix)
    packages.extend(pip)
    python = next((p.version for p in packages if p.name == "python" and p.manager == "conda"), None)
    channels = _channels_in_use(packages)
    return make_environment(
        kind="prefix",
        source=str(prefix),
        name=prefix.name,
        prefix=str(prefix),
        platform=min(subdirs) if subdirs else current_platform(),
        python=python,
        channels=channels,
        packages=packages,
        requested=tuple(RequestedSpec("conda", s) for _, s in sorted(requested.items())),
        virtual_packages=virtual,
        warnings=tuple(warnings),
    )


def _history(prefix: Path) -> dict[str, str]:
    path = prefix / "conda-meta" / "history"
    try:
        text = read_bytes(path).decode("utf-8", "replace")
    except OSError:
        return {}
    return history_mod.requested_specs(history_mod.parse(text))


def _channels_in_use(packages: list[Package]) -> tuple[str, ...]:
    """Channels that installed packages came from, most-used first (ties by name) — the real priority is
    unknowable from a prefix, so the channel that supplied most packages leads."""
    counts: dict[str, int] = {}
    for package in packages:
        if package.manager == "conda" and package.channel:
            counts[package.channel] = counts.get(package.channel, 0) + 1
    return tuple(sorted(counts, key=lambda c: (-counts[c], c)))


def _read_venv(prefix: Path, virtual: tuple[VirtualPackage, ...]) -> Environment:
    pip, warnings = read_pip_packages(prefix)
    return make_environment(
        kind="venv",
        source=str(prefix),
        name=prefix.name,
        prefix=str(prefix),
        platform=current_platform(),
        python=_venv_python(prefix),
        python_implementation=venv_implementation(prefix),
        packages=pip,
        virtual_packages=virtual,
        warnings=tuple(warnings),
    )


def venv_implementation(prefix: Path) -> str | None:
    """`cpython`, `pypy` or `graalpy`, from the interpreter pyvenv.cfg names, bin/python's target and the lib
    folder's name; None when the folder is no venv."""
    names = []
    try:
        text = read_bytes(prefix / "pyvenv.cfg").decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("executable", "home", "base-executable"):
            names.append(Path(value.strip()).name.lower())
    names += [Path(os.readlink(p)).name.lower() for p in (prefix / "bin").glob("python*") if p.is_symlink()]
    names += [entry.lower() for entry in _listdir(prefix / "lib")]
    for implementation in ("pypy", "graalpy"):
        if any(implementation in name for name in names):
            return implementation
    return "cpython"


def _listdir(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _venv_python(prefix: Path) -> str | None:
    try:
        text = read_bytes(prefix / "pyvenv.cfg").decode("utf-8", "replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info"):
            return value.strip()
    if Path(sys.prefix).resolve() == prefix.resolve():
        return ".".join(str(v) for v in sys.version_info[:3])
    return None
