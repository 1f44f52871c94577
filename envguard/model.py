"""The one environment model: typed, frozen, JSON-serialisable, deterministically ordered.

Every reader (live prefix, venv, environment.yml, explicit, conda-lock, pixi.lock, snapshot JSON) produces an
`Environment`; every command (export, lock, diff, check, create, verify) consumes one.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from envguard.cuda import CudaSummary, summarize
from envguard.errors import BadInputError
from envguard.validate import (
    ORIGIN_FIELDS_SHOWN,
    Kind,
    archive_name_problem,
    check_fields,
    identity_problem,
    refuse_controls,
    require,
)

SCHEMA_VERSION = 1
# A pip origin whose local path was not written (`envguard lock` without --include-local): it matches any
# file: origin when compared, and cannot be installed from the lock.
LOCAL_ORIGIN = "file:"

Manager = Literal["conda", "pip"]
SourceKind = Literal["prefix", "venv", "environment.yml", "explicit", "conda-lock", "pixi-lock", "snapshot"]
SOURCE_KINDS: tuple[str, ...] = get_args(SourceKind)
SPEC_ONLY_KINDS: frozenset[str] = frozenset({"environment.yml"})


@dataclass(frozen=True)
class PipOrigin:
    """Where a pip package came from when it was not an index release (PEP 610 direct_url.json)."""

    url: str = ""
    editable: bool = False
    vcs: str = ""
    commit_id: str = ""
    requested_revision: str = ""


@dataclass(frozen=True)
class Package:
    """One resolved package. Conda fields are empty for pip packages and vice versa."""

    manager: Manager
    name: str
    version: str
    build: str = ""
    build_number: int = 0
    channel: str = ""
    subdir: str = ""
    url: str = ""
    md5: str = ""
    sha256: str = ""
    installer: str = ""
    origin: PipOrigin | None = None
    depends: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        """Identity inside an environment: (manager, name)."""
        return (self.manager, self.name)

    @property
    def filename(self) -> str:
        """The archive file name from the URL (conda) or '' when unknown."""
        return self.url.rsplit("/", 1)[-1] if self.url else ""

    def describe(self) -> str:
        """Short human form: `numpy 1.26.4 py311h0_0 (conda-forge)` or `requests 2.31.0 (pip)`."""
        if self.manager == "pip":
            return f"{self.name} {self.version} (pip)"
        parts = [self.name, self.version]
        if self.build:
            parts.append(self.build)
        text = " ".join(parts)
        return f"{text} ({self.channel})" if self.channel else text

    def identity_problem(self) -> str | None:
        """Why this package (read from a lock) must not be installed: a name, version or build outside conda's
        rules (CEP 26) or PEP 508/440, or an archive file name that is not this package's; None when fine.
        Each of them becomes part of a path where it is installed or cached."""
        problem = identity_problem(self.manager, self.name, self.version, self.build)
        if problem is None and self.url and (self.manager == "conda" or self.filename.endswith(PIP_ARCHIVES)):
            problem = archive_name_problem(self.manager, self.filename, self.name, self.version, self.build)
        return problem


PIP_ARCHIVES = (".whl", ".tar.gz", ".zip")


@dataclass(frozen=True)
class RequestedSpec:
    """What the user asked for: a conda MatchSpec string or a pip requirement line."""

    manager: Manager
    spec: str


@dataclass(frozen=True)
class VirtualPackage:
    """A system virtual package such as `__cuda 12.4` or `__glibc 2.36`."""

    name: str
    version: str
    build: str = "0"


@dataclass(frozen=True)
class Fingerprints:
    """What the fingerprint probe measured inside the environment's own interpreter."""

    python: str | None = None
    numpy_version: str | None = None
    numpy_legacy: str | None = None
    numpy_generator: str | None = None
    torch_version: str | None = None
    torch_randperm: str | None = None
    dataloader_order: str | None = None
    torch_cuda: str | None = None
    cudnn: str | None = None
    cuda_arch_list: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


# The fingerprint's single-valued fields (versions and stream digests), derived from the dataclass: the one
# list the comparison, the lock metadata, the probe and the distributed check share.
FINGERPRINT_FIELDS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(Fingerprints) if f.default is None
)


def fingerprints_from(data: Mapping[str, Any]) -> Fingerprints:
    """Fingerprints from a JSON mapping (the probe's output, lock metadata): unknown keys ignored, values as
    text."""
    values: dict[str, Any] = {
        k: (str(data[k]) if data.get(k) is not None else None) for k in FINGERPRINT_FIELDS
    }
    values["cuda_arch_list"] = tuple(str(a) for a in data.get("cuda_arch_list") or ())
    values["errors"] = tuple(str(e) for e in data.get("errors") or ())
    return Fingerprints(**values)


@dataclass(frozen=True)
class Environment:
    """A whole environment, resolved (packages) and/or requested (specs)."""

    kind: SourceKind
    source: str = ""
    name: str | None = None
    prefix: str | None = None
    platform: str | None = None
    python: str | None = None
    python_implementation: str | None = None  # `cpython`, `pypy`: known for venvs (pyvenv.cfg), else None
    channels: tuple[str, ...] = ()
    packages: tuple[Package, ...] = ()
    requested: tuple[RequestedSpec, ...] = ()
    pip_options: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    virtual_packages: tuple[VirtualPackage, ...] = ()
    cuda: CudaSummary = field(default_factory=CudaSummary)
    fingerprints: Fingerprints | None = None
    warnings: tuple[str, ...] = ()
    schema_version: int = SCHEMA_VERSION

    @property
    def spec_only(self) -> bool:
        """True when the source lists requests but no resolved packages (an environment.yml)."""
        return self.kind in SPEC_ONLY_KINDS

    def conda_packages(self) -> tuple[Package, ...]:
        return tuple(p for p in self.packages if p.manager == "conda")

    def pip_packages(self) -> tuple[Package, ...]:
        return tuple(p for p in self.packages if p.manager == "pip")

    def get(self, name: str, manager: Manager = "conda") -> Package | None:
        """The first package of that name and manager (a dict lookup: fix lines and satisfaction ask once
        per difference, which a scan made quadratic: 32 s for 10,000 differences)."""
        return self._first.get((manager, name))

    @functools.cached_property
    def _first(self) -> dict[tuple[str, str], Package]:
        first: dict[tuple[str, str], Package] = {}
        for package in self.packages:
            first.setdefault(package.key, package)
        return first


def sort_packages(packages: Iterable[Package]) -> tuple[Package, ...]:
    """Deterministic order: conda before pip, then by name, version, build."""
    return tuple(sorted(packages, key=lambda p: (p.manager != "conda", p.name, p.version, p.build, p.url)))


def make_environment(**fields: Any) -> Environment:
    """Build an Environment with sorted packages and a CUDA summary derived from its contents; a name,
    version, channel, URL or spec holding a control character is bad input (`refuse_controls`)."""
    packages = sort_packages(fields.pop("packages", ()))
    virtual = tuple(sorted(fields.pop("virtual_packages", ()), key=lambda v: v.name))
    fields.setdefault("cuda", summarize(packages, virtual))
    env = Environment(packages=packages, virtual_packages=virtual, **fields)
    refuse_controls(env)
    return env


# --- JSON -------------------------------------------------------------------------------------------------


def to_dict(env: Environment) -> dict[str, Any]:
    """A JSON-ready dict with `schema_version` first and empty optional fields kept for a stable shape."""
    data = _plain(env)
    assert isinstance(data, dict)
    ordered = {"schema_version": data.pop("schema_version")}
    ordered.update(data)
    return ordered


_SCALARS = (str, int, float, bool, type(None))
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    """Dataclasses to dicts, tuples to lists (field names cached per class: snapshots hold thousands of
    values)."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, tuple | list):
        return [v if isinstance(v, _SCALARS) else _plain(v) for v in value]
    names = _FIELD_NAMES.get(type(value))
    if names is None:
        names = _FIELD_NAMES[type(value)] = tuple(f.name for f in dataclasses.fields(value))
    result = {}
    for name in names:
        item = getattr(value, name)
        result[name] = item if isinstance(item, _SCALARS) else _plain(item)
    return result


def from_dict(data: Mapping[str, Any], origin: str = "<snapshot>") -> Environment:
    """Rebuild an Environment from `to_dict` output; a wrong shape is bad input naming `origin`."""
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise BadInputError(
            f"{origin}: snapshot schema_version {version!r} is not supported (expected {SCHEMA_VERSION}); "
            "re-create it with this envguard"
        )
    _check_snapshot(data, origin)
    try:
        packages = tuple(_package(p) for p in data.get("packages", ()))
        fingerprints = data.get("fingerprints")
        env = Environment(
            kind=cast(SourceKind, data["kind"]),
            source=str(data.get("source", "")),
            name=data.get("name"),
            prefix=data.get("prefix"),
            platform=data.get("platform"),
            python=data.get("python"),
            python_implementation=data.get("python_implementation"),
            channels=tuple(data.get("channels", ())),
            packages=sort_packages(packages),
            requested=tuple(RequestedSpec(**r) for r in data.get("requested", ())),
            pip_options=tuple(data.get("pip_options", ())),
            platforms=tuple(data.get("platforms", ())),
            virtual_packages=tuple(VirtualPackage(**v) for v in data.get("virtual_packages", ())),
            cuda=CudaSummary(**data.get("cuda", {})),
            fingerprints=_fingerprints(fingerprints) if fingerprints else None,
            warnings=tuple(data.get("warnings", ())),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BadInputError(
            f"{origin}: malformed envguard snapshot ({exc}); re-create it with `envguard snapshot`"
        ) from exc
    refuse_controls(env, origin)
    return env


_SNAPSHOT_FIELDS: dict[str, Kind] = {
    "kind": "str",
    "source": "str",
    "name": "str",
    "prefix": "str",
    "platform": "str",
    "python": "str",
    "python_implementation": "str",
    "channels": "list[str]",
    "packages": "list[dict]",
    "requested": "list[dict]",
    "pip_options": "list[str]",
    "platforms": "list[str]",
    "virtual_packages": "list[dict]",
    "cuda": "dict",
    "fingerprints": "dict",
    "warnings": "list[str]",
}
_PACKAGE_FIELDS: dict[str, Kind] = {
    "manager": "str",
    "name": "str",
    "version": "str",
    "build": "str",
    "build_number": "int",
    "channel": "str",
    "subdir": "str",
    "url": "str",
    "md5": "str",
    "sha256": "str",
    "installer": "str",
    "origin": "dict",
    "depends": "list[str]",
}
_ORIGIN_FIELDS: dict[str, Kind] = {**dict.fromkeys(ORIGIN_FIELDS_SHOWN, "str"), "editable": "bool"}
_TEXT_FIELDS: dict[str, Kind] = dict.fromkeys(("manager", "spec", "name", "version", "build"), "str")
_FIX = "re-create it with `envguard snapshot`"


def _check_snapshot(data: Mapping[str, Any], origin: str) -> None:
    """Every field's JSON type (one bad-input line naming the file and the field)."""
    check_fields(data, _SNAPSHOT_FIELDS, origin, _FIX)
    if data.get("kind") not in SOURCE_KINDS:
        raise BadInputError(f"{origin}: field 'kind' must be one of {', '.join(SOURCE_KINDS)}; {_FIX}")
    for index, package in enumerate(data.get("packages") or ()):
        where = f"{origin}: packages[{index}]"
        check_fields(package, _PACKAGE_FIELDS, where, _FIX)
        for key in ("name", "version"):
            require(package, key, "str", where, _FIX)
        if package.get("manager", "conda") not in ("conda", "pip"):
            raise BadInputError(f"{where}: field 'manager' must be conda or pip; {_FIX}")
        check_fields(package.get("origin") or {}, _ORIGIN_FIELDS, f"{where}.origin", _FIX)
    for key in ("requested", "virtual_packages"):
        for index, item in enumerate(data.get(key) or ()):
            check_fields(item, _TEXT_FIELDS, f"{origin}: {key}[{index}]", _FIX)
    cuda = data.get("cuda") or {}
    check_fields(cuda, dict.fromkeys(cuda, "str"), f"{origin}: cuda", _FIX)
    prints = data.get("fingerprints") or {}
    check_fields(
        prints,
        {**dict.fromkeys(FINGERPRINT_FIELDS, "str"), "cuda_arch_list": "list[str]", "errors": "list[str]"},
        f"{origin}: fingerprints",
        _FIX,
    )


def _package(data: Mapping[str, Any]) -> Package:
    values = dict(data)
    origin = values.pop("origin", None)
    values["depends"] = tuple(values.get("depends", ()))
    return Package(origin=PipOrigin(**origin) if origin else None, **values)


def _fingerprints(data: Mapping[str, Any]) -> Fingerprints:
    values = dict(data)
    values["cuda_arch_list"] = tuple(values.get("cuda_arch_list", ()))
    values["errors"] = tuple(values.get("errors", ()))
    return Fingerprints(**values)
