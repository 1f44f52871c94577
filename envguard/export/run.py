"""Render an Environment as a portable environment.yml or an `@EXPLICIT` spec (pure: Environment -> text).

Three environment.yml modes:
- `pinned` (default): what the user asked for, pinned to the installed versions without build strings (so the
  file solves on another OS), plus python, the channels in priority order and a `pip:` section;
- `full`: every conda package as `name=version=build`, like `conda env export`;
- `from-history`: exactly the requests.

No `prefix:` line, no credentials, and no local paths of pip packages unless `include_local` is set.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal
from urllib.parse import unquote, urlsplit

from envguard.channels import strip_credentials
from envguard.depgraph import leaves
from envguard.errors import BadInputError, UsageError
from envguard.export.pins import Relax, cuda_glob, no_build_line, relax_conda_line, relax_pip_line
from envguard.formats import cyclonedx, explicit
from envguard.formats.yaml import scalar
from envguard.model import Environment, Package
from envguard.prefix.licenses import Declared, Key
from envguard.prefix.pipconfig import index_options
from envguard.specs import parse_conda, spec_name
from envguard.version import __version__

ExportMode = Literal["pinned", "full", "from-history"]
ExportFormat = Literal["env", "explicit", "cyclonedx"]
MODES: tuple[ExportMode, ...] = ("pinned", "full", "from-history")


@dataclass(frozen=True, slots=True)
class Exported:
    """Rendered text plus the warnings a user should see (commands print them; this module never does), and
    what it holds in a few words (`2 conda specs, 1 pip`) for the "wrote" line."""

    text: str
    warnings: tuple[str, ...] = ()
    summary: str = ""


def export(
    env: Environment,
    mode: ExportMode = "pinned",
    fmt: ExportFormat = "env",
    *,
    include_local: bool = False,
    no_builds: bool = False,
    relax: Relax | None = None,
    licenses: Mapping[Key, Declared] | None = None,
) -> Exported:
    """Dispatch on format: `env` (environment.yml in `mode`), `explicit` (always every conda package) or
    `cyclonedx` (an SBOM of every package; `licenses`: what each installed package declares, its licences,
    requirements and name as spelled, from `envguard.prefix.licenses.declared`)."""
    check_options(mode, fmt, no_builds, relax)
    if fmt == "explicit":
        return to_explicit(env)
    if fmt == "cyclonedx":
        _require_packages(env, "--format cyclonedx")
        sbom = cyclonedx.render(env, licenses)
        return Exported(sbom.text, (), sbom.summary)
    return to_environment_yml(env, mode, include_local=include_local, no_builds=no_builds, relax=relax)


def check_options(mode: ExportMode, fmt: ExportFormat, no_builds: bool, relax: Relax | None) -> None:
    """Refuse option combinations that say two things (before any source is read)."""
    if fmt in ("explicit", "cyclonedx"):
        if no_builds or relax:
            raise UsageError(f"--no-builds and --relax apply to environment.yml; --format {fmt} pins builds")
        return
    if no_builds and mode != "full":
        raise UsageError(
            f"--no-builds lists every package (as --full does) without builds; --{mode} writes no builds "
            "already: give one of them"
        )
    if relax and (mode == "from-history" or (mode == "full" and not no_builds)):
        what = (
            "--from-history writes the requests as typed" if mode == "from-history" else "--full pins builds"
        )
        raise UsageError(f"--relax needs versions without builds (--pinned or --no-builds); {what}")


# --- environment.yml
# -----------------------------------------------------------------------------------------


def to_environment_yml(
    env: Environment,
    mode: ExportMode = "pinned",
    *,
    include_local: bool = False,
    no_builds: bool = False,
    relax: Relax | None = None,
) -> Exported:
    """An environment.yml that `conda env create -f` accepts; `no_builds` (with `full`) strips builds but a
    CUDA build's choice, `relax` loosens every pin to its major or minor version."""
    check_options(mode, "env", no_builds, relax)
    warnings: list[str] = []
    if mode == "full":
        _require_packages(env, "--no-builds" if no_builds else "--full")
        conda = [(no_build_line if no_builds else _full_line)(p) for p in env.conda_packages()]
        if env.python and env.get("python") is None:
            conda.insert(0, f"python={env.python}")  # a venv: its interpreter is not a conda package
    elif mode == "from-history":
        conda = _history_lines(env, warnings)
    else:
        conda = _pinned_lines(env, warnings)
    pip = _pip_section(env, mode, include_local, warnings)
    # pip as a conda dependency only where it is one (conda env create adds it itself for a `pip:` section):
    # what export writes, check -f of the same environment accepts
    if (
        pip
        and not any(spec_name(line) == "pip" for line in conda)
        and (env.spec_only or env.get("pip", "conda"))
    ):
        conda = _insert_sorted(conda, _pip_itself(env))
    if relax:
        conda = [relax_conda_line(line, relax) for line in conda]
        pip = [relax_pip_line(line, relax) for line in pip]
    how = "export --no-builds" if no_builds else f"export --{mode}"
    header = _header("conda env create --file <this file>", how + (f" --relax {relax}" if relax else ""))
    body = _yaml_document(export_name(env), [strip_credentials(c) for c in env.channels], conda, pip)
    return Exported(header + body, tuple(warnings), f"{len(conda)} conda specs, {len(pip)} pip")


_VENV_FOLDERS = {".venv", "venv", "env", ".env", ".conda"}


def export_name(env: Environment) -> str | None:
    """The `name:` to write: a venv in `project/.venv` is named `project` (`.venv` is no valid conda name)."""
    name = env.name
    venv = not env.spec_only and not env.conda_packages()
    if (
        not env.prefix
        or not venv
        or not name
        or name.lower() not in _VENV_FOLDERS | {n.lstrip(".") for n in _VENV_FOLDERS}
    ):
        return name
    folder = PurePath(os.path.abspath(env.prefix)).parent.name  # `.venv` given from the project folder too
    parent = re.sub(r"[^A-Za-z0-9._-]+", "-", folder).lstrip("-.")
    return parent or name


def _require_packages(env: Environment, what: str) -> None:
    if env.spec_only:
        raise UsageError(
            f"{env.source}: {what} needs resolved packages, but an environment.yml only lists requests; "
            "export an installed environment or a lock file instead"
        )


def _full_line(package: Package) -> str:
    return (
        f"{package.name}={package.version}={package.build}"
        if package.build
        else f"{package.name}={package.version}"
    )


def _history_lines(env: Environment, warnings: list[str]) -> list[str]:
    requested = [_clean(r.spec) for r in env.requested if r.manager == "conda"]
    if env.spec_only or (requested and not recorded_by_conda(env)):
        return requested
    tops = leaves(env.conda_packages())
    if tops:
        warnings.append(
            f"{_label(env)}: {_no_history(env)}; wrote its {len(tops)} top-level package(s) instead"
        )
    return [p.name for p in tops]


def recorded_by_conda(env: Environment) -> bool:
    """conda (or a lock installer) recorded every installed package as requested, each pinned to its exact
    build (`create --clone`, `create --file explicit.txt`, conda-lock install): not what a user typed."""
    requests = [r.spec for r in env.requested if r.manager == "conda"]
    installed = {p.name for p in env.conda_packages()}
    if len(requests) < 2 or len(requests) != len(installed):
        return False
    names = set()
    for spec in requests:
        try:
            parsed = parse_conda(spec)
        except BadInputError:
            return False
        if not parsed.build or "*" in parsed.build or not (parsed.version or "").startswith("=="):
            return False
        names.add(parsed.name)
    return names == installed


def _no_history(env: Environment) -> str:
    if recorded_by_conda(env):
        return (
            "conda recorded every package as requested, with its build (an environment made with --clone, "
            "--file or from a lock), so what was asked for is unknown"
        )
    return "no requested specs are recorded (an environment made without conda's history)"


def _pinned_lines(env: Environment, warnings: list[str]) -> list[str]:
    if env.spec_only:
        warnings.append(
            f"{_label(env)}: lists requests only, nothing is installed to pin; wrote the requests as they are"
        )
        return [_clean(r.spec) for r in env.requested if r.manager == "conda"]
    installed = {p.name: p for p in env.conda_packages()}
    requests = [r.spec for r in env.requested if r.manager == "conda"]
    guessed = bool(installed) and (not requests or recorded_by_conda(env))
    if guessed:
        requests = [p.name for p in leaves(env.conda_packages())]
        warnings.append(
            f"{_label(env)}: {_no_history(env)}; pinned its {len(requests)} top-level package(s) instead"
        )
    lines: dict[str, str] = {}
    for spec in requests:
        name, line = _pin(spec, installed, warnings, _label(env), keep_cuda=guessed)
        if line:
            lines[name] = line
    # The interpreter decides every compiled build, so it is pinned even when nobody asked for it
    # (in a venv it is not a conda package: the venv's own version is used).
    python = installed["python"].version if "python" in installed else env.python
    if python and "python" not in lines:
        lines["python"] = f"python={python}"
    return [lines[name] for name in sorted(lines)]


def _pin(
    spec: str, installed: dict[str, Package], warnings: list[str], label: str, *, keep_cuda: bool = False
) -> tuple[str, str | None]:
    """`numpy[version='<2']` -> `numpy=1.26.4`; a channel prefix and a build constraint the user typed are
    kept; with `keep_cuda` (no request says what the user chose) a CUDA build keeps its choice: `*cuda11.8*`.
    """
    try:
        parsed = parse_conda(spec)
        name, channel, build = parsed.name, parsed.channel, parsed.build
    except BadInputError:
        name, channel, build = spec_name(spec), None, None
    if name.startswith("__"):
        warnings.append(
            f"{label}: virtual package request {spec!r} left out (the target machine provides it)"
        )
        return name, None
    package = installed.get(name)
    if package is None:
        warnings.append(f"{label}: {spec!r} was requested but {name} is not installed; left out")
        return name, None
    line = f"{name}={package.version}"
    if build and build != "*":
        line += f"={build}"
    elif keep_cuda and (accelerator := cuda_glob(package.build)):
        line += (
            f"={accelerator}"  # the CUDA choice survives: a solver without __cuda fails instead of going CPU
        )
    return name, f"{strip_credentials(channel)}::{line}" if channel else line


def _insert_sorted(lines: list[str], line: str) -> list[str]:
    """Add `line` where it belongs by package name when the list is in name order, else at the end."""
    names = [spec_name(x) for x in lines]
    if names != sorted(names):
        return [*lines, line]
    index = sum(1 for name in names if name < spec_name(line))
    return [*lines[:index], line, *lines[index:]]


def _pip_itself(env: Environment) -> str:
    pip = env.get("pip")
    return f"pip={pip.version}" if pip is not None and not env.spec_only else "pip"


def _pip_section(env: Environment, mode: ExportMode, include_local: bool, warnings: list[str]) -> list[str]:
    options = [_clean(o) for o in env.pip_options]
    requested = [_clean(r.spec) for r in env.requested if r.manager == "pip"]
    if env.spec_only or (mode == "from-history" and requested):
        return options + requested
    if not options and env.prefix and any(p.origin is None for p in env.pip_packages()):
        from pathlib import Path

        options = index_options(Path(env.prefix))
    lines: list[str] = []
    for package in env.pip_packages():
        line = pip_line(package, pinned=mode != "from-history", include_local=include_local)
        if line.startswith("#"):
            warnings.append(
                f"pip package {_pinned(package)} comes from a local folder or file; not exported "
                "(pass --include-local to write its path)"
            )
        lines.append(line)
    return options + lines


def pip_line(package: Package, *, pinned: bool = True, include_local: bool = False) -> str:
    """A pip requirement line pip understands: `name==1.0`, `name @ git+https://...@<commit>`, `-e path`,
    or a `# ...` note for a local install when local paths are not wanted."""
    origin = package.origin
    if origin is None or not origin.url:
        return _pinned(package) if pinned else package.name
    url = strip_credentials(origin.url)
    local = _is_local(url)
    if local and not include_local:
        return f"# {_pinned(package)} (from a local path; not exported, see --include-local)"
    if origin.vcs:
        base = url if url.startswith(f"{origin.vcs}+") else f"{origin.vcs}+{url}"
        revision = origin.commit_id or origin.requested_revision
        return f"{package.name} @ {base}@{revision}" if revision else f"{package.name} @ {base}"
    if origin.editable:
        return f"-e {_local_path(url)}"
    return f"{package.name} @ {url}" if "://" in url else url  # pip reads a bare path line as a local project


def _pinned(package: Package) -> str:
    return f"{package.name}=={package.version}" if package.version else package.name


def _is_local(url: str) -> bool:
    return url.startswith("file:") or "://" not in url


def _local_path(url: str) -> str:
    return unquote(urlsplit(url).path) if url.startswith("file:") else url


def _clean(text: str) -> str:
    return strip_credentials(text) if "://" in text else text


def _label(env: Environment) -> str:
    return env.name or env.kind


def _yaml_document(
    name: str | None, channels: Sequence[str], conda: Sequence[str], pip: Sequence[str]
) -> str:
    out: list[str] = []
    if name:
        out.append(f"name: {scalar(name)}")
    if channels:
        out.append("channels:")
        out += [f"  - {scalar(c)}" for c in channels]
    out.append("dependencies:" if conda or pip else "dependencies: []")
    out += [f"  - {scalar(line)}" for line in conda]
    if pip:
        out.append("  - pip:")
        out += [f"      {line}" if line.startswith("#") else f"      - {scalar(line)}" for line in pip]
    return "\n".join(out) + "\n"


def _header(create_command: str, how: str) -> str:
    return (
        "# This file may be used to create an environment using:\n"
        f"# $ {create_command}\n"
        f"# created-by: envguard {__version__} ({how})\n"
    )


# --- explicit
# ------------------------------------------------------------------------------------------------


def to_explicit(env: Environment) -> Exported:
    """An `@EXPLICIT` spec as `conda list --explicit --sha256` writes it (md5 where no sha256 is known)."""
    _require_packages(env, "--format explicit")
    warnings: list[str] = []
    pip = env.pip_packages()
    if pip:
        names = ", ".join(p.name for p in pip[:5]) + (", ..." if len(pip) > 5 else "")
        warnings.append(
            f"{len(pip)} pip package(s) cannot be written to an explicit spec and were left out: {names}"
        )
    header = _header("conda create --name <env> --file <this file>", "export --format explicit").splitlines()
    platform = env.platform or "unknown"
    text, left_out = explicit.render(env.packages, [*header[:2], f"# platform: {platform}", header[2]])
    written = sum(1 for p in env.conda_packages() if p.url)  # explicit.render leaves out those without one
    return Exported(text, (*warnings, *left_out), f"{written} conda packages (explicit)")


# --- dependency graph
# ----------------------------------------------------------------------------------------
