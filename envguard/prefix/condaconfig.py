"""Where conda keeps things: envs dirs, package caches, environments.txt, condarc — read, never spawned."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard import textio
from envguard.atomic import clean_stale_temps, write_text
from envguard.errors import BadInputError, OperationalError
from envguard.model import VirtualPackage
from envguard.textio import read_bytes


def condarc_paths() -> list[Path]:
    """condarc files in conda's search order (later ones win)."""
    home = Path.home()
    paths = [Path("/etc/conda/.condarc"), Path("/etc/conda/condarc"), Path("/var/lib/conda/.condarc")]
    root = root_prefix()  # conda reads its root's condarc ($CONDA_ROOT/.condarc and condarc)
    if root is not None:
        paths += [root / ".condarc", root / "condarc"]
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    paths += [
        xdg / "conda" / ".condarc",
        xdg / "conda" / "condarc",
        home / ".config" / "conda" / ".condarc",
        home / ".conda" / ".condarc",
        home / ".conda" / "condarc",
        home / ".condarc",
    ]
    prefix = os.environ.get("CONDA_PREFIX")
    if prefix:
        paths.append(Path(prefix) / ".condarc")
    explicit = os.environ.get("CONDARC")
    if explicit:
        paths.append(Path(explicit))
    seen: list[Path] = []
    for path in paths:
        if path not in seen:
            seen.append(path)
    return seen


def load_condarc() -> dict[str, Any]:
    """Merge every condarc found; list keys accumulate (earlier files first), scalars are overridden."""
    import yaml

    merged: dict[str, Any] = {}
    for path in condarc_paths():
        if not path.is_file():
            continue
        try:
            data = textio.load_yaml(read_bytes(path).decode("utf-8", "replace")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise BadInputError(
                f"{path}: unreadable condarc ({textio.yaml_reason(exc)}); fix or remove it"
            ) from exc
        if not isinstance(data, dict):
            continue
        for key, value in data.items():
            if isinstance(value, list) and isinstance(merged.get(key), list):
                merged[key] = [*value, *[v for v in merged[key] if v not in value]]
            else:
                merged[key] = value
    return merged


def channel_alias() -> str | None:
    """The condarcs' `channel_alias` (where bare channel names live: a mirror of anaconda.org, perhaps with
    a `/t/<TOKEN>`), None when none sets one. The condarcs are parsed only when one names it (a lock of an
    unchanged environment.yml loads no YAML parser)."""
    mentioned = False
    for path in condarc_paths():
        with contextlib.suppress(OSError):
            mentioned = mentioned or b"channel_alias" in read_bytes(path)
    if not mentioned:
        return None
    value = load_condarc().get("channel_alias")
    return value if isinstance(value, str) and value.strip() else None


def _expand(value: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(value)))


def root_prefix() -> Path | None:
    """conda's base prefix when one is known: CONDA_ROOT, MAMBA_ROOT_PREFIX, CONDA_EXE's parent, else
    derived from the `conda` (or `mamba`) executable on PATH (`executable_root`)."""
    for var in ("CONDA_ROOT", "MAMBA_ROOT_PREFIX"):
        if os.environ.get(var):
            return Path(os.environ[var])
    exe = os.environ.get("CONDA_EXE")
    if exe:
        return Path(exe).parent.parent
    import shutil

    for name in ("conda", "mamba"):
        found = shutil.which(name)
        if found:
            return executable_root(Path(found))
    return None


_INTERPRETER = re.compile(rb"""["'\s!]([^\s"'!]+)/(?:bin/python[0-9.]*|python\.exe)["'\s]""")


def executable_root(exe: Path) -> Path | None:
    """The prefix a conda executable runs from, read from files (conda's own `info --json` costs a second):
    `ROOT/bin/conda` or `ROOT/condabin/conda` beside `ROOT/conda-meta`, else the interpreter the script
    starts (its `#!ROOT/bin/python` line, or an `exec ROOT/bin/python -m conda` wrapper): conda's root is
    that interpreter's prefix (its sys.prefix). None when neither says."""
    real = Path(os.path.realpath(exe))
    if real.parent.name in ("bin", "condabin", "Scripts") and (real.parent.parent / "conda-meta").is_dir():
        return real.parent.parent
    try:
        with open(real, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    for match in _INTERPRETER.finditer(head):
        root = Path(os.fsdecode(match.group(1)))
        if root.is_absolute() and ((root / "bin").is_dir() or (root / "python.exe").is_file()):
            return root
    return None


def envs_dirs() -> list[Path]:
    """Folders that hold named environments: CONDA_ENVS_PATH/CONDA_ENVS_DIRS, condarc envs_dirs, root/envs,
    ~/.conda/envs — in conda's order; the first writable one is where new environments go."""
    result: list[Path] = []
    for var in ("CONDA_ENVS_PATH", "CONDA_ENVS_DIRS"):
        for item in os.environ.get(var, "").split(os.pathsep):
            if item:
                result.append(_expand(item))
    for item in load_condarc().get("envs_dirs") or []:
        result.append(_expand(str(item)))
    root = root_prefix()
    if root is not None:
        result.append(root / "envs")
    result.append(Path.home() / ".conda" / "envs")
    return _unique(result)


def pkgs_dirs() -> list[Path]:
    """Package caches: CONDA_PKGS_DIRS, condarc pkgs_dirs, root/pkgs, ~/.conda/pkgs."""
    result: list[Path] = []
    for item in os.environ.get("CONDA_PKGS_DIRS", "").split(","):
        if item.strip():
            result.append(_expand(item.strip()))
    for item in load_condarc().get("pkgs_dirs") or []:
        result.append(_expand(str(item)))
    root = root_prefix()
    if root is not None:
        result.append(root / "pkgs")
    result.append(Path.home() / ".conda" / "pkgs")
    return _unique(result)


def environments_txt() -> Path:
    return Path.home() / ".conda" / "environments.txt"


def registered_environments() -> list[Path]:
    """Prefixes listed in ~/.conda/environments.txt that still exist."""
    return [p for p in registered_prefixes() if p.is_dir()]


def registered_prefixes() -> list[Path]:
    """Every prefix listed in ~/.conda/environments.txt (`~` expanded), whether or not it exists now (an
    unmounted disk, a deleted folder): clean treats a missing one as usage unknown."""
    try:
        lines = read_bytes(environments_txt()).decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    return [Path(line.strip()).expanduser() for line in lines if line.strip()]


def find_named(name: str) -> Path:
    """Resolve `name:ENV` to a prefix through envs dirs and environments.txt."""
    for folder in envs_dirs():
        candidate = folder / name
        if (candidate / "conda-meta").is_dir():
            return candidate
    for prefix in registered_environments():
        if prefix.name == name:
            return prefix
    root = root_prefix()
    if name == "base" and root is not None:
        return root
    raise BadInputError(
        f"no conda environment named {name!r} in {', '.join(str(d) for d in envs_dirs())} "
        "or ~/.conda/environments.txt; `conda env list` shows the names"
    )


def register(prefix: Path) -> None:
    """Add a prefix to ~/.conda/environments.txt (atomically, once, under a file lock so concurrent creates
    never lose each other's lines) so `conda env list` shows it. OperationalError when the registry cannot
    be written (a read-only ~/.conda): conda then warns and keeps the environment, and so do callers."""
    _update_registry(lambda lines: lines if str(prefix) in lines else [*lines, str(prefix)], prefix)


def unregister(prefix: Path) -> None:
    """Remove a prefix from ~/.conda/environments.txt (a create that failed leaves nothing registered)."""
    _update_registry(lambda lines: [ln for ln in lines if ln.strip() != str(prefix)], prefix)


def _update_registry(change: Callable[[list[str]], list[str]], prefix: Path) -> None:
    path = environments_txt()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path.with_name(".environments.txt.envguard-lock")):
            clean_stale_temps(path)  # a writer killed between its temp file and the rename
            try:
                lines = [ln for ln in read_bytes(path).decode("utf-8", "replace").splitlines() if ln.strip()]
            except OSError:
                lines = []
            new = change(lines)
            if new != lines:
                write_text(path, "\n".join(new) + "\n" if new else "")
    except (OSError, OperationalError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise OperationalError(
            f"cannot update {path} for {prefix} ({reason}); `conda env list` does not list it, "
            f"`conda activate {prefix}` still works by path"
        ) from exc


@contextlib.contextmanager
def _locked(lock: Path) -> Iterator[None]:
    """An exclusive advisory lock (flock) on a side file; the registry itself is replaced atomically, so it
    cannot carry the lock."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl
        except ImportError:  # Windows: no flock; the atomic replace still prevents a torn file
            yield
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _unique(paths: list[Path]) -> list[Path]:
    seen: list[Path] = []
    for path in paths:
        if path not in seen:
            seen.append(path)
    return seen


@dataclass(frozen=True, slots=True)
class CondaInfo:
    """What `conda/mamba/micromamba info --json` reported (all three recorded schemas)."""

    tool: str
    version: str = ""
    platform: str = ""
    pkgs_dirs: tuple[str, ...] = ()
    envs_dirs: tuple[str, ...] = ()
    envs: tuple[str, ...] = ()
    root_prefix: str | None = None
    virtual_packages: tuple[VirtualPackage, ...] = ()


def parse_info(data: Mapping[str, Any]) -> CondaInfo:
    """Read conda's `pkgs_dirs/envs_dirs/envs/root_prefix` or (micro)mamba's `package cache/envs
    directories/base environment`; micromamba 1.4.5 reports neither list, so its caches and envs dirs derive
    from the base."""
    if "pkgs_dirs" in data or "conda_version" in data:
        return CondaInfo(
            tool="conda",
            version=str(data.get("conda_version") or ""),
            platform=str(data.get("platform") or ""),
            virtual_packages=_virtual(data.get("virtual_pkgs")),
            pkgs_dirs=_strings(data.get("pkgs_dirs")),
            envs_dirs=_strings(data.get("envs_dirs")),
            envs=_strings(data.get("envs")),
            root_prefix=_string(data.get("root_prefix")),
        )
    if "base environment" in data or "package cache" in data:
        tool = "micromamba" if "micromamba version" in data else "mamba"
        base = _string(data.get("base environment"))
        pkgs = _strings(data.get("package cache")) or ((str(Path(base) / "pkgs"),) if base else ())
        envs_dirs = _strings(data.get("envs directories")) or ((str(Path(base) / "envs"),) if base else ())
        envs = tuple(e for e in (_string(data.get("env location")), base) if e)
        version = str(data.get("micromamba version") or data.get("mamba version") or "")
        platform = str(data.get("platform") or "")
        return CondaInfo(
            tool=tool,
            version=version,
            platform=platform,
            pkgs_dirs=pkgs,
            envs_dirs=envs_dirs,
            envs=envs,
            root_prefix=base,
        )
    raise BadInputError(
        "`info --json` output has neither conda's pkgs_dirs nor mamba's 'package cache'; "
        "pass the caches with --cache"
    )


def _virtual(value: object) -> tuple[VirtualPackage, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(
        VirtualPackage(str(v[0]), str(v[1]), str(v[2]) if len(v) > 2 else "0")
        for v in value
        if isinstance(v, list | tuple) and len(v) >= 2
    )


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(str(v) for v in value if isinstance(v, str) and v)


def _string(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
