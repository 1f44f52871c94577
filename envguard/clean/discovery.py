"""Find package caches and environments: conda config, `conda info --json`, the rattler/pixi cache, pixi
projects.

A folder counts as a package cache only when it carries a cache marker (conda's `urls.txt`, rattler's
`.cache.lock`, mamba's `<dir>.lock`, `CACHEDIR.TAG`) or holds an extracted package (`NAME/info/index.json`); a
conda environment, `/` and the home folder are never caches.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from envguard import process
from envguard.clean.model import PACKAGE_SUFFIXES, Cache, CacheKind, EnvRef
from envguard.errors import BadInputError
from envguard.prefix import condaconfig
from envguard.prefix.condaconfig import CondaInfo, parse_info

PIXI_SEARCH_DEPTH = 3


def conda_info() -> tuple[CondaInfo | None, list[str]]:
    """What only the conda-like tool itself can say, or None. Its root prefix, envs dirs and package caches
    are read from files (the executable's location, CONDA_* variables, .condarc: `condaconfig`), so `info
    --json` (a second of conda's start-up) runs only when no root can be derived that way: a standalone
    micromamba without MAMBA_ROOT_PREFIX, a conda shim that names no interpreter."""
    exe = _find_conda()
    if exe is None or condaconfig.root_prefix() is not None:
        return None, []
    try:
        proc = process.run([exe, "info", "--json"], timeout=60)
    except (OSError, process.TimedOut) as exc:
        return None, [f"`{exe} info --json` failed ({exc.__class__.__name__}); using conda config files only"]
    if proc.returncode != 0:
        return None, [f"`{exe} info --json` exited {proc.returncode}; using conda config files only"]
    try:
        return parse_info(json.loads(proc.stdout)), []
    except (ValueError, BadInputError) as exc:
        return None, [f"`{exe} info --json` printed unreadable output ({exc}); using conda config files only"]


def _find_conda() -> str | None:
    for var in ("CONDA_EXE", "MAMBA_EXE"):
        value = os.environ.get(var)
        if value and Path(value).is_file():
            return value
    for name in ("conda", "mamba", "micromamba"):
        found = shutil.which(name)
        if found:
            return found
    return None


def rattler_cache_roots() -> list[tuple[Path, str]]:
    """rattler's and pixi's cache roots (each holds `pkgs/` and `repodata/`): RATTLER_CACHE_DIR,
    PIXI_CACHE_DIR, else the platform cache dir's `rattler/cache`."""
    roots: list[tuple[Path, str]] = []
    for var, origin in (("RATTLER_CACHE_DIR", "RATTLER_CACHE_DIR"), ("PIXI_CACHE_DIR", "PIXI_CACHE_DIR")):
        if os.environ.get(var):
            roots.append((Path(os.environ[var]).expanduser(), origin))
    roots.append((_user_cache_dir() / "rattler" / "cache", "rattler"))
    return roots


def _user_cache_dir() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def recognise(path: Path, origin: str) -> Cache | str:
    """A Cache for a package-cache folder, else the reason it is not one."""
    try:
        resolved = path.expanduser().resolve()
    except OSError as exc:
        return f"cannot resolve ({exc.strerror})"
    if not os.path.isdir(resolved):  # os.path: a name too long for the file system is no folder either
        return "not a folder"
    if resolved == Path(resolved.anchor) or resolved == Path.home().resolve():
        return "a filesystem root or the home folder is never a package cache"
    if (resolved / "conda-meta").is_dir():
        return "a conda environment (has conda-meta/), not a package cache"
    kind = _pkgs_kind(resolved)
    if kind is not None:
        index = tuple(p for p in (resolved / "cache",) if p.is_dir() and not p.is_symlink())
        return Cache(root=resolved, pkgs=resolved, kind=kind, origin=origin, index_dirs=index)
    pkgs = resolved / "pkgs"
    if pkgs.is_dir() and not pkgs.is_symlink() and _pkgs_kind(pkgs) is not None:
        index = tuple(p for p in (resolved / "repodata",) if p.is_dir() and not p.is_symlink())
        return Cache(root=resolved, pkgs=pkgs, kind="rattler", origin=origin, index_dirs=index)
    return (
        "no urls.txt or .cache.lock, no extracted package (NAME/info/index.json) and no package archive "
        "beside a CACHEDIR.TAG"
    )


def _pkgs_kind(folder: Path) -> CacheKind | None:
    """rattler when rattler's global lock is there, conda for other markers or extracted packages, else
    None."""
    if (folder / ".cache.lock").is_file():
        return "rattler"
    if (folder / "urls.txt").is_file() or (folder / f"{folder.name}.lock").is_file():
        return "conda"
    # CACHEDIR.TAG alone marks any tool's cache (pip, cargo, ...): with it, a package cache also holds a
    # package archive; without it, an extracted package (W9)
    tagged = (folder / "CACHEDIR.TAG").is_file()
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if tagged and entry.name.endswith(PACKAGE_SUFFIXES) and entry.is_file(follow_symlinks=False):
                    return "conda"
                if entry.is_dir(follow_symlinks=False) and os.path.isfile(
                    os.path.join(entry.path, "info", "index.json")
                ):
                    return "conda"
    except OSError:
        return None
    return None


def discover_caches(explicit: Sequence[Path], info: CondaInfo | None) -> tuple[list[Cache], list[str]]:
    """Caches to clean: exactly `explicit` (each must be a package cache), else every configured one that
    exists."""
    if explicit:
        caches: list[Cache] = []
        for path in explicit:
            found = recognise(path, "--cache")
            if isinstance(found, str):
                raise BadInputError(f"{path}: not a package cache ({found}); point --cache at a pkgs folder")
            caches.append(found)
        return _unique_caches(caches), []
    return _configured_caches(info)


def _configured_caches(info: CondaInfo | None) -> tuple[list[Cache], list[str]]:
    candidates: list[tuple[Path, str]] = [(p, "conda config") for p in condaconfig.pkgs_dirs()]
    if info is not None:
        candidates += [(Path(p), f"{info.tool} info") for p in info.pkgs_dirs]
    candidates += rattler_cache_roots()
    caches: list[Cache] = []
    notes: list[str] = []
    for path, origin in candidates:
        if not path.exists():
            continue
        found = recognise(path, origin)
        if isinstance(found, str):
            notes.append(f"{path} ({origin}) skipped: {found}")
        else:
            caches.append(found)
    return _unique_caches(caches), notes


def _unique_caches(caches: Iterable[Cache]) -> list[Cache]:
    seen: dict[Path, Cache] = {}
    for cache in caches:
        seen.setdefault(cache.pkgs, cache)
    return list(seen.values())


def discover_environments(
    explicit: Sequence[Path], pixi_roots: Sequence[Path], info: CondaInfo | None
) -> tuple[list[EnvRef], list[str]]:
    """Every environment whose records protect packages: environments.txt, envs dirs, the base prefix,
    `conda info` envs, `--env` prefixes and pixi environments under `--pixi-root` folders."""
    # every registered prefix, even one whose folder or conda-meta is missing now: its usage is unknown, so
    # nothing it might use is removed (W8)
    found: list[EnvRef] = [EnvRef(p, "environments.txt") for p in condaconfig.registered_prefixes()]
    envs_dirs = [(d, "envs_dirs") for d in condaconfig.envs_dirs()]
    if info is not None:
        envs_dirs += [(Path(d), f"{info.tool} info") for d in info.envs_dirs]
        found += [EnvRef(Path(p), f"{info.tool} info") for p in info.envs]
    for folder, origin in envs_dirs:
        found += [EnvRef(child, origin) for child in _children_with_meta(folder)]
    root = condaconfig.root_prefix()
    if root is not None:
        found.append(EnvRef(root, "base"))
    for prefix in explicit:
        if not os.path.isdir(prefix / "conda-meta"):  # os.path: a name too long is no folder either
            raise BadInputError(
                f"{prefix}: not a conda environment (no conda-meta/); --env takes a prefix folder"
            )
        found.append(EnvRef(prefix, "--env"))
    notes: list[str] = []
    for root_dir in pixi_roots:
        if not os.path.isdir(root_dir):
            raise BadInputError(
                f"{root_dir}: no such folder; --pixi-root takes a folder holding pixi projects"
            )
        pixi = pixi_environments(root_dir)
        if not pixi:
            notes.append(f"--pixi-root {root_dir}: no .pixi/envs/* environment found")
        found += [EnvRef(p, "pixi") for p in pixi]
    return _unique_envs(found), notes


def _children_with_meta(folder: Path) -> list[Path]:
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return []
    return [c for c in children if (c / "conda-meta").is_dir()]


def pixi_environments(root: Path) -> list[Path]:
    """`.pixi/envs/*` prefixes of the project at `root` and of projects up to three folders below it."""
    found: list[Path] = []
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        found += _children_with_meta(folder / ".pixi" / "envs")
        if depth >= PIXI_SEARCH_DEPTH:
            continue
        try:
            with os.scandir(folder) as entries:
                subdirs = [
                    Path(e.path)
                    for e in entries
                    if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
                ]
        except OSError:
            continue
        stack += [(sub, depth + 1) for sub in subdirs]
    return sorted(found)


def _unique_envs(envs: Iterable[EnvRef]) -> list[EnvRef]:
    seen: dict[str, EnvRef] = {}
    for env in envs:
        if not (env.prefix / "conda-meta").is_dir() and env.origin != "environments.txt":
            continue  # a registered env without conda-meta stays: its usage is unknown (W8)
        key = os.path.realpath(env.prefix)
        seen.setdefault(key, env)
    return list(seen.values())
