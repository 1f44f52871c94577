"""Read pixi.lock (rattler lock, versions 5-7) through py-rattler: one environment, one platform.

Conda packages keep their repodata (channel, subdir, URL, md5, sha256, depends); PyPI packages become pip
packages with the PEP 503 name; a path or VCS location is recorded as their origin. Version 7 locks carry each
platform's virtual packages, which become the Environment's virtual packages.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from envguard.channels import normalize, strip_credentials
from envguard.errors import BadInputError, first_line
from envguard.machine.platform import current_platform
from envguard.machine.virtual import parse_override
from envguard.model import Environment, Package, PipOrigin, VirtualPackage, make_environment
from envguard.prefix.records import rattler_to_package
from envguard.specs import canonical_name
from envguard.textio import read_input

DEFAULT_ENVIRONMENT = "default"
_INDEX_HOSTS = ("files.pythonhosted.org", "pypi.org", "pypi.python.org")


def read(path: Path, platform: str | None = None, environment: str = DEFAULT_ENVIRONMENT) -> Environment:
    """One environment of a pixi.lock for one platform (default: this machine's)."""
    lock = _load(path)
    env = lock.environment(environment)
    if env is None:
        names = ", ".join(sorted(name for name, _ in lock.environments())) or "none"
        raise BadInputError(f"{path}: no environment {environment!r} in this pixi.lock (it has: {names})")
    lock_platform = _pick_platform(path, lock, env, platform)
    packages, warnings = _packages(path, env, lock_platform)
    channels = tuple(normalize(str(c)) for c in env.channels())
    python = next((p.version for p in packages if p.manager == "conda" and p.name == "python"), None)
    return make_environment(
        kind="pixi-lock",
        source=str(path),
        name=environment,
        platform=lock_platform.name,
        python=python,
        channels=tuple(c for c in channels if c),
        packages=packages,
        virtual_packages=_virtual(path, lock_platform),
        warnings=tuple(warnings),
    )


def _load(path: Path) -> Any:
    import rattler

    read_input(path, 0)  # a missing path, a FIFO or a device is bad input before rattler opens it
    try:
        return rattler.LockFile.from_path(path)
    except Exception as exc:  # rattler raises its own exception types for every parse failure
        repaired = _with_subdirs(path) if "subdir" in str(exc) else None
        if repaired is not None:
            return repaired
        raise BadInputError(
            f"{path}: not a readable pixi.lock ({first_line(exc)}); re-create it with `pixi lock`"
        ) from exc


_CONDA_ITEM = re.compile(r"^(?P<indent> *)- conda:(?P<rest>.*)$")


def _with_subdirs(path: Path) -> Any | None:
    """conda's `export --format rattler-lock-v6` leaves out `subdir` for file:// channels, which py-rattler
    needs: add it from each package URL (`.../<subdir>/<file>`) and read the file again (None when that fails
    too)."""
    import tempfile

    import rattler

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    patched = with_subdirs(text)
    if patched == text:
        return None
    with tempfile.TemporaryDirectory(prefix="envguard-pixi-") as tmp:
        copy = Path(tmp) / "pixi.lock"
        copy.write_text(patched, encoding="utf-8")
        try:
            return rattler.LockFile.from_path(copy)
        except Exception:  # still unreadable: report the original error
            return None


def with_subdirs(text: str) -> str:
    """The lock text with `subdir:` added to each top-level `packages:` conda entry that has none (pure)."""
    lines = text.splitlines()
    out: list[str] = []
    i, in_packages = 0, False
    while i < len(lines):
        line = lines[i]
        if line and not line.startswith((" ", "-")):
            in_packages = line.rstrip() == "packages:"
        match = _CONDA_ITEM.match(line) if in_packages else None
        if match is None:
            out.append(line)
            i += 1
            continue
        key_indent = len(match["indent"]) + 2
        item = [line]
        i += 1
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) >= key_indent
        ):
            item.append(lines[i])
            i += 1
        out.extend(_add_subdir(item, key_indent))
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _add_subdir(item: list[str], key_indent: int) -> list[str]:
    """One `- conda: URL` item (URL on its line or folded onto the next ones) with a `subdir:` key."""
    keys = [ln for ln in item[1:] if len(ln) - len(ln.lstrip()) == key_indent]
    if any(ln.strip().startswith("subdir:") for ln in keys):
        return item
    url_lines = [item[0].split("- conda:", 1)[1]]
    for ln in item[1:]:
        if len(ln) - len(ln.lstrip()) == key_indent:
            break
        url_lines.append(ln)
    url = " ".join(part.strip() for part in url_lines if part.strip()).strip("'\"")
    parts = url.rstrip("/").split("/")
    if "://" not in url or len(parts) < 2 or not re.fullmatch(r"[a-z0-9_-]+", parts[-2]):
        return item
    body = item[len(url_lines) :]
    return [*item[: len(url_lines)], f"{' ' * key_indent}subdir: {parts[-2]}", *body]


def _pick_platform(path: Path, lock: Any, env: Any, wanted: str | None) -> Any:
    name = wanted or current_platform()
    available = list(env.platforms()) or list(lock.platforms())
    for candidate in available:
        if candidate.name == name:
            return candidate
    for candidate in lock.platforms():
        if candidate.name == name:
            return candidate  # declared, but this environment has no packages for it
    names = ", ".join(sorted(p.name for p in available)) or "none"
    hint = "pass --platform" if wanted is None else "pick one of those with --platform"
    raise BadInputError(
        f"{path}: no packages for platform {name} in this pixi.lock (it has: {names}); {hint}"
    )


def _packages(path: Path, env: Any, lock_platform: Any) -> tuple[list[Package], list[str]]:
    packages: list[Package] = []
    warnings: list[str] = []
    try:
        locked = list(env.packages(lock_platform) or ())
    except Exception as exc:  # a platform without packages raises in some rattler versions
        raise BadInputError(
            f"{path}: cannot read packages for {lock_platform.name} ({first_line(exc)})"
        ) from exc
    for item in locked:
        kind = type(item).__name__
        if kind == "PypiLockedPackage":
            package = _pypi(item, warnings, path)
        elif kind == "CondaLockedBinaryPackage":
            package = rattler_to_package(item.repo_data_record())
        else:
            package = _conda_source(item, warnings, path)
        problem = package.identity_problem()
        if problem is not None:
            raise BadInputError(f"{path}: {problem}; re-create it with `pixi lock`")
        packages.append(package)
    return packages, warnings


def _conda_source(item: Any, warnings: list[str], path: Path) -> Package:
    """A pixi source package (built from a path or git at install time): no archive URL or hash."""
    record = item.package_record
    location = strip_credentials(str(item.location))
    warnings.append(
        f"{path}: {item.name} is a conda source package ({location}); it is built at install time"
    )
    return Package(
        manager="conda",
        name=str(item.name),
        version=str(record.version),
        build=str(record.build),
        build_number=int(record.build_number),
        subdir=str(record.subdir or ""),
        depends=tuple(str(d) for d in record.depends),
    )


def _pypi(item: Any, warnings: list[str], path: Path) -> Package:
    location = strip_credentials(str(item.location))
    version = str(item.version)
    if version.startswith("<"):
        warnings.append(f"{path}: pypi package {item.name} has no fixed version (built from {location})")
        version = ""
    hashes = item.hashes
    return Package(
        manager="pip",
        name=canonical_name(str(item.name)),
        version=version,
        sha256=_hex(getattr(hashes, "sha256", None)),
        md5=_hex(getattr(hashes, "md5", None)),
        origin=_pypi_origin(location),
    )


def _pypi_origin(location: str) -> PipOrigin | None:
    """None for an index release; otherwise where the package comes from (a path, a VCS or an archive URL)."""
    if "://" not in location:
        return PipOrigin(url=location)
    scheme, _, rest = location.partition("://")
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1].lower()
    if scheme in ("http", "https") and host in _INDEX_HOSTS:
        return None
    if "+" in scheme:
        return _vcs_origin(scheme, rest)
    return PipOrigin(url=location)


def _vcs_origin(scheme: str, rest: str) -> PipOrigin:
    """`git+https://host/repo.git?rev=main#<commit>` (pixi) or `git+https://host/repo@<rev>` (PEP 508)."""
    vcs, _, transport = scheme.partition("+")
    base, _, commit = f"{transport}://{rest}".partition("#")
    base, _, query = base.partition("?")
    requested = next(
        (v for k, _, v in (p.partition("=") for p in query.split("&")) if k in ("rev", "tag", "branch")), ""
    )
    head, sep, revision = base.rpartition("@")
    if sep and "/" not in revision and "/" in head.split("://", 1)[-1]:
        base, requested = head, requested or revision
    return PipOrigin(url=base, vcs=vcs, commit_id=commit, requested_revision=requested)


def _virtual(path: Path, lock_platform: Any) -> tuple[VirtualPackage, ...]:
    result = []
    for spec in getattr(lock_platform, "virtual_packages", None) or ():
        text = str(spec).strip()
        if not text.startswith("__"):
            raise BadInputError(f"{path}: platform {lock_platform.name} lists {text!r} as a virtual package")
        result.append(parse_override(text))
    return tuple(result)


def _hex(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return str(value)
