"""Read a live prefix: conda-meta records and history directly (never spawning conda), plus pip dist-infos.

Works for environments made by conda, mamba, micromamba, pixi and rattler, and for plain venvs.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from envguard.channels import channel_from_url, normalize
from envguard.errors import BadInputError
from envguard.model import Environment, Package, RequestedSpec, VirtualPackage, make_environment
from envguard.readers import history as history_mod
from envguard.readers.pip_dist import read_pip_packages


def is_conda_prefix(path: Path) -> bool:
    return (path / "conda-meta").is_dir()


def is_venv(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file()


def iter_records(prefix: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Yield (path, record) for each `conda-meta/*.json`; a corrupt record is bad input naming the file."""
    meta = prefix / "conda-meta"
    try:
        names = sorted(n for n in os.listdir(meta) if n.endswith(".json"))
    except OSError as exc:
        raise BadInputError(
            f"{meta}: cannot list ({exc.strerror}); is {prefix} a conda environment?"
        ) from exc
    for name in names:
        path = meta / name
        yield path, load_record(path)


def load_record(path: Path) -> dict[str, Any]:
    """One conda-meta record, validated enough to be used."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror}); check permissions") from exc
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        at = f":{line}" if line else ""
        raise BadInputError(
            f"{path}{at}: corrupt conda-meta record ({_short(exc)}); reinstall that package or remove the file"
        ) from exc
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("name", "version")):
        raise BadInputError(
            f"{path}: conda-meta record lacks name/version (truncated?); reinstall that package or remove the file"
        )
    return data


def _short(exc: ValueError) -> str:
    return str(exc).split(":", 1)[0]


def record_to_package(record: dict[str, Any]) -> Package:
    """Map a conda-meta record (or repodata record) to a Package."""
    url = str(record.get("url") or "")
    channel = str(record.get("channel") or "")
    subdir = str(record.get("subdir") or "")
    if url:
        url_channel, url_subdir = channel_from_url(url)
        channel = url_channel or normalize(channel)
        subdir = subdir or url_subdir
    else:
        channel = normalize(channel)
    from envguard.channels import strip_credentials

    return Package(
        manager="conda",
        name=record["name"],
        version=record["version"],
        build=str(record.get("build") or record.get("build_string") or ""),
        build_number=int(record.get("build_number") or 0),
        channel=channel,
        subdir=subdir,
        url=strip_credentials(url),
        md5=str(record.get("md5") or ""),
        sha256=str(record.get("sha256") or ""),
        depends=tuple(record.get("depends") or ()),
    )


def read_prefix(prefix: Path, virtual_packages: tuple[VirtualPackage, ...] = ()) -> Environment:
    """Snapshot a live conda prefix or venv (no probe)."""
    prefix = prefix.expanduser()
    if not prefix.is_dir():
        raise BadInputError(f"{prefix}: no such environment folder; give a prefix path or name:ENV")
    if is_conda_prefix(prefix):
        return _read_conda(prefix, virtual_packages)
    if is_venv(prefix) or (prefix / "lib").is_dir() or (prefix / "Lib").is_dir():
        return _read_venv(prefix, virtual_packages)
    raise BadInputError(f"{prefix}: neither a conda environment (no conda-meta/) nor a venv (no pyvenv.cfg)")


def _read_conda(prefix: Path, virtual: tuple[VirtualPackage, ...]) -> Environment:
    packages: list[Package] = []
    record_specs: dict[str, str] = {}
    subdirs: set[str] = set()
    for _path, record in iter_records(prefix):
        package = record_to_package(record)
        packages.append(package)
        if package.subdir and package.subdir != "noarch":
            subdirs.add(package.subdir)
        specs = record.get("requested_specs") or (
            [record["requested_spec"]] if record.get("requested_spec") else []
        )
        for spec in specs:
            record_specs[history_mod.spec_name(str(spec))] = str(spec)
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
        text = path.read_text(encoding="utf-8", errors="replace")
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
        packages=pip,
        virtual_packages=virtual,
        warnings=tuple(warnings),
    )


def _venv_python(prefix: Path) -> str | None:
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info"):
            return value.strip()
    if Path(sys.prefix).resolve() == prefix.resolve():
        return ".".join(str(v) for v in sys.version_info[:3])
    return None


def current_platform() -> str:
    """The conda subdir of this machine (`linux-64`, `osx-arm64`, `win-64`...), without importing rattler."""
    if hasattr(os, "uname"):
        machine = os.uname().machine.lower()
    else:  # Windows
        import platform as _platform

        machine = _platform.machine().lower()
    system = sys.platform
    arch = {"x86_64": "64", "amd64": "64", "aarch64": "aarch64", "arm64": "arm64", "ppc64le": "ppc64le"}.get(
        machine, machine
    )
    if system.startswith("linux"):
        return f"linux-{arch}"
    if system == "darwin":
        return "osx-arm64" if arch in ("arm64", "aarch64") else "osx-64"
    if system == "win32":
        return "win-arm64" if arch in ("arm64", "aarch64") else "win-64"
    return f"{system}-{arch}"
