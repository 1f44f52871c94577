"""Write conda-lock.yml (version 1) the way conda-lock does, plus envguard's extras in `custom_metadata`.

Pure rendering (`render_lock`, `render_explicit`, `input_hash`) and one atomic writer (`write_lock`). Output
is deterministic: packages sorted like conda-lock (manager, name, platform), dependencies sorted, no
timestamps.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from envguard.atomic import write_text
from envguard.channels import scrub, strip_credentials
from envguard.formats import explicit
from envguard.formats.condalock import meta as lockmeta
from envguard.formats.yaml import dump
from envguard.model import LOCAL_ORIGIN, Environment, Package, VirtualPackage
from envguard.textio import gc_paused
from envguard.version import __version__


def input_hash(inputs: Environment, platform: str, virtual: Sequence[VirtualPackage] = ()) -> str:
    """sha256 of the normalised input for one platform: the file's channels and specs (environment.yml) or the
    exact package set (a live environment), plus the virtual packages the solve or environment had."""
    data: dict[str, Any] = {"platform": platform, "virtual": lockmeta.encode_virtual(tuple(virtual))}
    if inputs.spec_only:
        data["channels"] = list(inputs.channels)
        data["conda"] = sorted(r.spec.strip() for r in inputs.requested if r.manager == "conda")
        data["pip"] = sorted(r.spec.strip() for r in inputs.requested if r.manager == "pip")
        data["pip_options"] = sorted(inputs.pip_options)
    else:
        data["packages"] = sorted(
            f"{p.manager}:{p.name}={p.version}={p.build}:{p.channel}:{p.md5 or p.sha256}"
            for p in inputs.packages
        )
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@gc_paused()
def render_lock(
    envs_by_platform: Mapping[str, Environment],
    *,
    sources: Sequence[str],
    content_hashes: Mapping[str, str],
    channels: Sequence[str] | None = None,
    reproduce: str = "",
    source_kind: str = "environment.yml",
    lock_name: str = "conda-lock.yml",
    exclude_newer: str | None = None,
) -> str:
    """The full conda-lock.yml text for resolved environments keyed by platform (`exclude_newer`: the time
    it was solved as of, kept in its metadata)."""
    platforms = sorted(envs_by_platform)
    used = list(channels) if channels is not None else _channels(envs_by_platform)
    document = {
        "version": 1,
        "metadata": {
            "content_hash": {p: content_hashes[p] for p in platforms},
            "channels": [{"url": strip_credentials(c), "used_env_vars": []} for c in used],
            "platforms": platforms,
            "sources": list(sources),
            "custom_metadata": custom_metadata(envs_by_platform, source_kind, reproduce, exclude_newer),
        },
        "package": [entry for _key, entry in sorted(_entries(envs_by_platform), key=lambda item: item[0])],
    }
    pip_only = not any(env.conda_packages() for env in envs_by_platform.values())
    by_version = sorted({p.name for env in envs_by_platform.values() for p in by_version_only(env)})
    has_pip = any(env.pip_packages() for env in envs_by_platform.values())
    no_conda_pip = any(lacks_conda_pip(env) for env in envs_by_platform.values())
    text = header(
        reproduce,
        lock_name,
        source_kind,
        pip_only=pip_only,
        by_version=by_version,
        has_pip=has_pip,
        no_conda_pip=no_conda_pip,
    )
    return text + dump(document)


def by_version_only(env: Environment) -> tuple[Package, ...]:
    """pip packages whose file is not known (from an index no configuration names, built from an sdist, a
    local path not written): no `package:` entry (conda-lock turns each into `NAME @ URL` for pip, which
    rejects anything but a URL), `name==version` in custom_metadata instead."""
    return tuple(p for p in env.pip_packages() if not pip_url(p))


def lacks_conda_pip(env: Environment) -> bool:
    """A conda environment whose pip entries `conda-lock install` would hand to a pip it has not got: it runs
    pip through `conda run` in the new prefix, which finds the next pip on PATH (another environment's) and
    installs there."""
    return (
        bool(env.conda_packages()) and env.get("pip") is None and any(pip_url(p) for p in env.pip_packages())
    )


def header(
    reproduce: str,
    lock_name: str,
    source_kind: str,
    *,
    pip_only: bool = False,
    by_version: Sequence[str] = (),
    has_pip: bool = False,
    no_conda_pip: bool = False,
) -> str:
    """The comment block: what wrote the file, how to reproduce, install and check it."""
    origin = (
        "an environment.yml (solved with py-rattler)"
        if source_kind == "environment.yml"
        else ("a live environment (its exact installed packages, no solving)")
    )
    lines = [
        f"This lock file was generated by envguard {__version__} from {origin}. DO NOT EDIT!",
        "It is a conda-lock.yml (version 1): conda-lock and `conda create --file` (conda-lockfiles) read it.",
        "",
        "Reproduce it with:",
        f"    {reproduce or f'envguard lock -o {lock_name}'}",
        *(
            _pip_only_install(lock_name)
            if pip_only
            else ['Install it as "YOURENV" with:', f"    conda-lock install -n YOURENV {lock_name}"]
        ),
        "Check an environment against it (exit 0 clean, 1 drift) with:",
        f"    envguard check --lock {lock_name}",
        *(
            [
                f"pip package(s) {', '.join(by_version)}: name==version only (the wheel file is not known: "
                "from an index no pip configuration names, built from an sdist, or a local path not written "
                "without --include-local), so no `package:` entry (conda-lock would hand pip a line it "
                "rejects): conda-lock leaves them out when it installs, install them with pip afterwards; "
                "envguard reads them from custom_metadata (pip_by_version) and installs them from your index"
            ]
            if by_version
            else []
        ),
        *(_pip_limits() if has_pip and not pip_only else []),  # a venv's lock is no conda environment
        *([NO_CONDA_PIP] if no_conda_pip else []),
    ]
    return "".join(f"# {line}".rstrip() + "\n" for line in lines)


def _pip_limits() -> list[str]:
    """Which installers take the pip entries (measured: conda-lock 4.0.3, conda 26.7.1 with conda-lockfiles
    0.2.2)."""
    return [
        "pip entries follow conda-lock's schema (manager: pip, url: the wheel, hash.sha256).",
        "pip packages: install with `conda-lock install` (pip checks each sha256), `envguard create",
        "--lock` or `envguard sync`; `conda create --file` does not: conda-lockfiles 0.2.2 refuses",
        "`manager: pip` (exit 1, nothing created; its own `manager: pypi` fails too), and under any name but",
        "conda-lock.yml conda reads this file as an environment.yml and creates an EMPTY environment (exit",
        "0): `envguard check --lock` lists every package it lacks.",
    ]


NO_CONDA_PIP = (
    "no conda `pip` package in this lock: `conda-lock install` runs `conda run pip`, which would be another "
    "environment's pip, and the pip packages would land there: add pip (`conda install pip`) and lock again."
)


def _pip_only_install(lock_name: str) -> list[str]:
    """A venv's lock: conda cannot install it; verify rebuilds it in a venv of the recorded Python."""
    return [
        "It holds pip packages only (no conda packages); rebuild it in a fresh venv and check it with:",
        f"    envguard verify --lock {lock_name} --keep",
        "or by hand (the entry's URL and --hash=sha256:... where it has them):",
        "    python -m venv YOURENV && YOURENV/bin/pip install --no-deps NAME==VERSION ...  (each `package:` "
        "entry)",
    ]


def custom_metadata(
    envs: Mapping[str, Environment], source_kind: str, reproduce: str, exclude_newer: str | None = None
) -> dict[str, str]:
    """envguard's extras (str -> str, sorted): created_by, version, source kind, the exclude-newer time,
    per-platform virtual packages, fingerprints and pip origins."""
    # `created_by` is required by conda-lockfiles (`conda create --file conda-lock.yml`), as conda-lock writes
    # it
    data = {
        "created_by": f"envguard {__version__}",
        lockmeta.VERSION_KEY: __version__,
        lockmeta.SOURCE_KIND_KEY: source_kind,
    }
    if reproduce:
        data[lockmeta.REPRODUCE_KEY] = reproduce
    if exclude_newer:
        data[lockmeta.EXCLUDE_NEWER_KEY] = exclude_newer
    for platform, env in envs.items():
        data[lockmeta.platform_key(platform, lockmeta.FIELD_VIRTUAL)] = lockmeta.encode_virtual(
            env.virtual_packages
        )
        if env.python and env.python_implementation and env.get("python") is None:  # a venv's interpreter
            key = lockmeta.platform_key(platform, lockmeta.FIELD_PYTHON)
            data[key] = lockmeta.encode_python(env.python_implementation, env.python)
        if env.fingerprints is not None:
            key = lockmeta.platform_key(platform, lockmeta.FIELD_FINGERPRINTS)
            data[key] = lockmeta.encode_fingerprints(env.fingerprints)
        unknown = by_version_only(env)
        if unknown:
            key = lockmeta.platform_key(platform, lockmeta.FIELD_PIP_BY_VERSION)
            data[key] = lockmeta.encode_by_version({p.name: p.version for p in unknown})
        indexes = {p.name: scrub(p.channel) for p in env.pip_packages() if p.channel}
        if indexes:
            key = lockmeta.platform_key(platform, lockmeta.FIELD_PIP_INDEXES)
            data[key] = json.dumps(dict(sorted(indexes.items())), separators=(",", ":"))
        origins = {p.name: p.origin for p in env.pip_packages() if p.origin is not None}
        if origins:
            key = lockmeta.platform_key(platform, lockmeta.FIELD_PIP_ORIGINS)
            data[key] = lockmeta.encode_origins(origins)
    return dict(sorted(data.items()))


def _channels(envs: Mapping[str, Environment]) -> list[str]:
    seen: list[str] = []
    for platform in sorted(envs):
        for channel in envs[platform].channels:
            if channel not in seen:
                seen.append(channel)
    return seen


def _entries(envs: Mapping[str, Environment]) -> list[tuple[tuple[str, str, str], dict[str, Any]]]:
    result: list[tuple[tuple[str, str, str], dict[str, Any]]] = []
    for platform, env in envs.items():
        unknown = set(by_version_only(env))  # in custom_metadata: an entry needs a URL pip can install
        for package in env.packages:
            if package in unknown:
                continue
            result.append(((package.manager, package.name, platform), package_entry(package, platform)))
    return result


def package_entry(package: Package, platform: str) -> dict[str, Any]:
    """One `package:` item in conda-lock's key order."""
    entry: dict[str, Any] = {
        "name": package.name,
        "version": package.version,
        "manager": package.manager,
        "platform": platform,
        "dependencies": dependencies_mapping(package.depends),
        "url": strip_credentials(package.url)
        if package.manager == "conda"
        else (pip_url(package) or by_version_url(package)),
        "hash": {k: v for k, v in (("md5", package.md5), ("sha256", package.sha256)) if v},
    }
    if package.manager == "conda" and package.build:
        entry["build"] = package.build
    entry["category"] = "main"
    entry["optional"] = False
    return entry


def pip_url(package: Package) -> str:
    """The file a pip package comes from: its locked URL, else its direct URL (PEP 610); '' when unknown (an
    index install: an index page is no file pip can install, so none is made up)."""
    if package.url:
        return strip_credentials(package.url)
    if package.origin is not None and package.origin.url and package.origin.url != LOCAL_ORIGIN:
        return strip_credentials(package.origin.url)
    return ""


def by_version_url(package: Package) -> str:
    """The `url` of a pip entry whose file is unknown: `name==version`, a requirement, not a made-up URL."""
    return f"{package.name}=={package.version}"


def dependencies_mapping(depends: Sequence[str]) -> dict[str, str]:
    """MatchSpec strings -> conda-lock's sorted `{name: spec}` (virtual packages kept, as conda-lock does)."""
    result: dict[str, str] = {}
    for spec in depends:
        name, _, rest = spec.strip().partition(" ")
        if name:
            result[name] = rest.strip()
    return dict(sorted(result.items()))


def render_explicit(env: Environment, content_hash: str, reproduce: str = "") -> tuple[str, tuple[str, ...]]:
    """One platform of a lock as an `@EXPLICIT` file (the one explicit writer), pip packages as comments."""
    header = [
        f"# Generated by envguard {__version__} (envguard lock --format explicit).",
        f"# platform: {env.platform}",
        f"# input_hash: {content_hash}",
        *([f"# Reproduce: {reproduce}"] if reproduce else []),
        "# Install: conda create --name YOURENV --file <this file>",
    ]
    return explicit.render(env.packages, header, [f"# pip {p.name}=={p.version}" for p in env.pip_packages()])


def write_lock(path: Path | str, text: str) -> Path:
    """Write the lock atomically (temp file, fsync, rename): a crash never leaves a half-written lock."""
    return write_text(Path(path), text)
