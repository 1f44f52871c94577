"""pip in an environment's own interpreter: an environment.yml's `pip:` requirements (as `conda env create`
does), a lock's pip packages (verified archives, local project folders, name==version), and removing
distributions as pip does (every file their RECORD lists)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Collection, Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

from envguard import process
from envguard.channels import scrub
from envguard.engine import pipengine
from envguard.engine.archives import Archive, has_archive
from envguard.engine.pipengine import PipEngine
from envguard.errors import BackendError, BadInputError, OperationalError
from envguard.formats.localsource import local_path
from envguard.model import LOCAL_ORIGIN, PIP_ARCHIVES, Package
from envguard.prefix import pipconfig
from envguard.prefix.pip_dist import distribution_files
from envguard.prefix.probe import interpreter
from envguard.process import one_line, timeout_seconds

_NO_PIP = "No module named pip"


def pip_install(
    prefix: Path,
    requirements: Sequence[str],
    options: Sequence[str] = (),
    *,
    cwd: Path | None = None,
    timeout: float | None = None,
    engine: PipEngine | None = None,
) -> str:
    """Install into `prefix`'s own interpreter with the pip engine (`pipengine.select`): `uv pip install
    --python PYTHON [options] requirements` (pip's configured indexes and find-links passed on, as uv does not
    read pip.conf), else `<prefix python> -m pip install --prefix PREFIX ...`; returns the engine that ran
    (pip where uv does not take an option, or cannot target the interpreter). Failures quote the engine."""
    engine = engine or pipengine.select()
    python = interpreter(prefix)
    args = pipengine.split_options(list(options))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    limit = timeout if timeout is not None else timeout_seconds()
    if engine.name == "uv":
        configured = [] if "--no-index" in args or "--index-url" in args else _configured(prefix)
        command = pipengine.uv_command(engine, python, prefix, [*configured, *args], list(requirements))
        if command is not None:
            done = _run_pip(prefix, command, limit, env, cwd, "uv pip install")
            if done.returncode == 0:
                return "uv"
            if not _UV_CANNOT_TARGET.search(done.stderr):
                raise BackendError(
                    f"uv pip install in {prefix} failed (exit {done.returncode}): {_last_lines(done.stderr)}"
                )
    _pip(prefix, python, args, requirements, limit, env, cwd)
    return "pip"


# uv could not use the interpreter (too old, not CPython/PyPy, broken): pip in it serves instead
_UV_CANNOT_TARGET = re.compile(
    r"(Failed to (inspect|query) Python interpreter|[Uu]nsupported Python|requires Python 3\.[0-9]+ or"
    r" later|not a supported Python)"
)


def _configured(prefix: Path) -> list[str]:
    """pip's configured index URLs and find-links locations as uv's options, word by word (uv reads no
    pip.conf)."""
    values = pipconfig.settings(prefix)
    return [
        *(word for url in values["index-url"][:1] for word in ("--index-url", url)),
        *(word for url in values["extra-index-url"] for word in ("--extra-index-url", url)),
        *(word for url in values["find-links"] for word in ("--find-links", url)),
    ]


def _last_lines(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    return one_line(scrub(" ".join(lines[-3:])))


def _pip(
    prefix: Path,
    python: Path,
    args: list[str],
    requirements: Sequence[str],
    limit: float,
    env: dict[str, str],
    cwd: Path | None,
) -> None:
    """`<prefix python> -m pip install --prefix PREFIX ...`. An environment without pip of its own (a `uv
    venv`, `python -m venv --without-pip`) is served by this interpreter's pip acting on it (`--python`)."""
    tail = [
        "install",
        "--prefix",
        str(prefix),
        "--no-input",
        "--disable-pip-version-check",
        *args,
        *requirements,
    ]
    done = _run_pip(prefix, [str(python), "-m", "pip", *tail], limit, env, cwd)
    if done.returncode != 0 and _NO_PIP in done.stderr:
        command = [sys.executable, "-m", "pip", "--python", str(python), *tail]
        done = _run_pip(prefix, command, limit, env, cwd)
    if done.returncode != 0:
        raise BackendError(
            f"pip install in {prefix} failed (exit {done.returncode}): {_last_lines(done.stderr)}"
        )


def _run_pip(
    prefix: Path,
    command: list[str],
    limit: float,
    env: dict[str, str],
    cwd: Path | None,
    what: str = "pip install",
) -> process.Finished:
    try:
        return process.run(command, timeout=limit, env=env, cwd=cwd)
    except process.TimedOut as exc:
        raise BackendError(
            f"{what} in {prefix} did not finish within {limit:.0f} s; raise ENVGUARD_BACKEND_TIMEOUT"
        ) from exc
    except OSError as exc:
        raise BackendError(
            f"{what}: cannot run {command[0]} ({exc.strerror}); is python installed in {prefix}?"
        ) from exc


def install_locked_wheels(
    prefix: Path,
    archives: Sequence[Archive],
    others: Sequence[Package],
    pkgs_dir: Path | None = None,
    engine: PipEngine | None = None,
) -> list[str]:
    """Install locked pip packages without dependencies: verified archives installed from a URL originally
    from that URL again (same PEP 610 origin), the other verified ones through a --find-links folder (index
    releases, like the original), both `--require-hashes`; the rest as `install_unhashed` does (those by
    `name==version` are warned about). `engine`: pipengine.select()'s, by default."""
    engine = engine or pipengine.select()
    ran: list[str] = []
    warnings: list[str] = []
    fixed = ["--no-deps", "--ignore-installed", "--no-compile"]
    direct = [a for a in archives if _direct_url(a)]
    if direct:  # installed from a URL originally: install from that URL again, so pip records the same origin
        ran.append(install_direct(prefix, direct, fixed, engine))
    archives = [a for a in archives if not _direct_url(a)]
    if archives:
        with tempfile.TemporaryDirectory(prefix="envguard-wheels-") as links:
            places = _stable_folders(archives) if engine.name == "uv" else None
            if places is None:
                for archive in archives:
                    os.symlink(archive.path.resolve(), Path(links) / archive.package.filename)
                places = [links]
            offline = [*fixed, "--no-index", *(f"--find-links {shlex.quote(p)}" for p in places)]
            if all(a.algorithm == "sha256" for a in archives):  # pip proves each file again as it installs
                lines = [
                    f"{a.package.name}=={a.package.version} --hash=sha256:{a.expected}\n" for a in archives
                ]
                requirements = Path(links) / "requirements.txt"
                requirements.write_text("".join(lines), encoding="utf-8")
                options = [*offline, "--require-hashes"]
                ran.append(pip_install(prefix, ["-r", str(requirements)], options, engine=engine))
            else:  # md5 is no hash pip accepts; envguard proved the archives
                named = [f"{a.package.name}=={a.package.version}" for a in archives]
                ran.append(pip_install(prefix, named, offline, engine=engine))
    ran += install_unhashed(prefix, others, pkgs_dir, engine=engine)
    if engine.name == "uv" and "pip" in ran:
        warnings.append(f"uv could not install into {interpreter(prefix)}; pip installed its pip packages")
    by_version = [p.name for p in others if local_source(p) is None and local_file(p) is None]
    if by_version:
        warnings.append(
            f"pip package(s) {', '.join(by_version)} have no archive hash in the lock; installed by version "
            "(from --pkgs-dir or the index), not verified"
        )
    return warnings


def _stable_folders(archives: Sequence[Archive]) -> list[str] | None:
    """The folders the verified wheels lie in (the package cache, a find-links folder), when each is there
    under its own name: uv finds them there and, as the paths do not change from run to run, reuses what it
    unpacked before (a temporary folder of links made it unpack every wheel again). None otherwise."""
    if not all(a.path.name == a.package.filename and a.path.suffix == ".whl" for a in archives):
        return None
    return sorted({str(a.path.resolve().parent) for a in archives})


def install_unhashed(
    prefix: Path,
    packages: Sequence[Package],
    pkgs_dir: Path | None = None,
    *,
    dry_run: bool = False,
    engine: PipEngine | None = None,
) -> list[str]:
    """The lock's pip packages that have no archive to prove: local project folders (`pip install .`, `-e
    .`) from the folder the lock names, then `name==version` from pkgs_dir when it holds their wheels
    (offline), else from the index. With `dry_run`, pip only resolves them (`--dry-run`): a sync asks that
    before it changes anything, so a package pip cannot find stops it with the environment as it was.
    Returns the engines that ran."""
    engine = engine or pipengine.select()
    ran: list[str] = []
    fixed = ["--no-deps", "--ignore-installed", "--no-compile", *(["--dry-run"] if dry_run else [])]
    folders = [p for p in packages if local_source(p) is not None]
    if folders:
        words = [word for p in folders for word in _folder_requirement(p)]
        ran.append(pip_install(prefix, words, fixed, engine=engine))
    others = [p for p in packages if local_source(p) is None]
    files = [p for p in others if local_file(p) is not None]
    if files:  # installed from a wheel or sdist file that is still there: from that file again
        named = [f"{p.name} @ {p.origin.url}" for p in files if p.origin]
        ran.append(pip_install(prefix, named, fixed, engine=engine))
    others = [p for p in others if local_file(p) is None]
    if others:
        # the package cache holds wheels envguard downloaded; a folder that does not exist is no find-links
        # location (pip would warn that it "is ignored")
        local = [f"--find-links {shlex.quote(str(pkgs_dir))}"] if pkgs_dir and pkgs_dir.is_dir() else []
        if local and all(_has_wheel(pkgs_dir, p) for p in others):
            local.append("--no-index")
        named = [f"{p.name}=={p.version}" for p in others]
        ran.append(pip_install(prefix, named, [*fixed, *local], engine=engine))
    return ran


def install_direct(
    prefix: Path, archives: Sequence[Archive], options: Sequence[str], engine: PipEngine | None = None
) -> str:
    """`name @ URL --hash=sha256:...` for each verified archive, with `--require-hashes` (pip checks the file
    again as it installs it); a file:// URL whose file is gone installs the verified copy instead."""
    lines = []
    for archive in archives:
        url = _direct_url(archive)
        if url.startswith("file:") and not Path(unquote(urlsplit(url).path)).is_file():
            url = archive.path.resolve().as_uri()
        lines.append(f"{archive.package.name} @ {url} --hash=sha256:{archive.expected}\n")
    with tempfile.TemporaryDirectory(prefix="envguard-direct-") as folder:
        requirements = Path(folder) / "requirements.txt"
        requirements.write_text("".join(lines), encoding="utf-8")
        return pip_install(prefix, ["-r", str(requirements)], [*options, "--require-hashes"], engine=engine)


def _direct_url(archive: Archive) -> str:
    """The URL an archive was installed from (PEP 610, no VCS, not editable) when its sha256 is proved."""
    origin = archive.package.origin
    if origin is None or not origin.url or origin.vcs or origin.editable or archive.algorithm != "sha256":
        return ""
    return origin.url if archive.verified else ""


def _has_wheel(folder: Path | None, package: Package) -> bool:
    if folder is None:
        return False
    stem = package.name.replace("-", "_")
    return any(folder.glob(f"{stem}-{package.version}-*.whl")) or any(
        folder.glob(f"{package.name}-{package.version}*")
    )


def local_file(package: Package) -> Path | None:
    """The local wheel or sdist an unhashed pip package was installed from (an older pip records no hash in
    direct_url.json), when that file is still there; else None."""
    origin = package.origin
    if package.manager != "pip" or origin is None or origin.vcs or not origin.url.endswith(PIP_ARCHIVES):
        return None
    path = local_path(origin.url)
    return path if path is not None and path.is_file() else None


def local_source(package: Package) -> Path | None:
    """The local folder a pip package is installed from (a project pip-installed from its folder, editable
    or not, as the lock records it relative to itself), or None: an archive, an index release, a VCS URL, or
    a local path the lock did not record."""
    origin = package.origin
    if package.manager != "pip" or origin is None or origin.vcs or origin.url == LOCAL_ORIGIN:
        return None
    if has_archive(package) or origin.url.endswith(PIP_ARCHIVES):  # a file, not a project folder
        return None
    return local_path(origin.url)


def check_local_sources(packages: Sequence[Package]) -> None:
    """Every local project folder these packages install from exists (bad input naming the first that does
    not), before anything is installed."""
    for package in packages:
        folder = local_source(package)
        if folder is not None and not folder.is_dir():
            raise BadInputError(
                f"pip package {package.name} {package.version} installs from the local folder {folder} (the "
                "lock records it relative to itself), which does not exist; use the lock inside the checkout "
                "it belongs to, or re-lock"
            )


def _folder_requirement(package: Package) -> list[str]:
    """`-e FOLDER` for an editable install, else `FOLDER` (pip builds and installs the project)."""
    folder = str(local_source(package))
    return ["-e", folder] if package.origin is not None and package.origin.editable else [folder]


def uninstall(prefix: Path, names: Collection[str]) -> None:
    """Remove these pip-installed distributions from `prefix` as pip does: every file their RECORD lists (and
    the bytecode Python compiled from them), folders left empty, then the dist-info. Done here rather than by
    the environment's pip, which an environment may not have (a `uv venv`), and which removes only what lies
    inside its own interpreter's prefix. Files a RECORD places outside the prefix are left alone."""
    for dist in distribution_files(prefix, names):
        if not dist.files:
            raise OperationalError(
                f"{dist.folder}: no RECORD, so pip's files of {dist.name} are not known; remove it with the "
                "pip that installed it, then run again"
            )
        folders: set[Path] = set()
        for path in dist.files:
            _remove(path)
            folders.add(path.parent)
            if path.suffix == ".py":  # pip removes the bytecode of every module it installed
                cache = path.parent / "__pycache__"
                for compiled in _listdir(cache):
                    if compiled.startswith(f"{path.stem}.") and compiled.endswith(".pyc"):
                        _remove(cache / compiled)
                folders.add(cache)
        _remove_tree(dist.folder)
        sites = {Path(os.path.normpath(dist.folder.parent)), Path(os.path.normpath(prefix.absolute()))}
        for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
            _prune(folder, sites)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        _remove_tree(path)
    except OSError as exc:
        raise OperationalError(f"cannot remove {path} ({exc.strerror}); check permissions") from exc


def _remove_tree(path: Path) -> None:
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise OperationalError(f"cannot remove {path} ({exc.strerror}); check permissions") from exc


def _prune(folder: Path, stop: set[Path]) -> None:
    """Remove `folder` and its parents while they are empty, up to (never including) a site-packages folder
    or the prefix."""
    while folder not in stop and folder.parent != folder:
        try:
            folder.rmdir()
        except OSError:  # not empty, or gone already
            if folder.exists():
                return
        folder = folder.parent


def _listdir(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


# --- a fresh venv for a pip-only lock (verify) -------------------------------------------------------------
