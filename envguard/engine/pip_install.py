"""Install an environment.yml's `pip:` requirements with the environment's own pip, as `conda env create`
does."""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

from envguard import process
from envguard.engine.archives import Archive
from envguard.errors import BackendError
from envguard.model import Package
from envguard.prefix.pip_dist import read_pip_packages
from envguard.prefix.probe import interpreter
from envguard.process import one_line, timeout_seconds


def pip_install(
    prefix: Path,
    requirements: Sequence[str],
    options: Sequence[str] = (),
    *,
    cwd: Path | None = None,
    timeout: float | None = None,
) -> None:
    """`<prefix python> -m pip install --prefix PREFIX [options] requirements`; failures quote pip."""
    python = interpreter(prefix)
    args = [arg for option in options for arg in shlex.split(option)]
    command = [
        str(python),
        "-m",
        "pip",
        "install",
        "--prefix",
        str(prefix),
        "--no-input",
        "--disable-pip-version-check",
        *args,
        *requirements,
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    limit = timeout if timeout is not None else timeout_seconds()
    try:
        done = process.run(command, timeout=limit, env=env, cwd=cwd)
    except process.TimedOut as exc:
        raise BackendError(
            f"pip install in {prefix} did not finish within {limit:.0f} s; raise ENVGUARD_BACKEND_TIMEOUT"
        ) from exc
    except OSError as exc:
        raise BackendError(
            f"pip: cannot run {python} ({exc.strerror}); is python installed in {prefix}?"
        ) from exc
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
        raise BackendError(
            f"pip install in {prefix} failed (exit {done.returncode}): {one_line(' '.join(lines[-3:]))}"
        )


def install_locked_wheels(
    prefix: Path, archives: Sequence[Archive], others: Sequence[Package], pkgs_dir: Path | None = None
) -> list[str]:
    """Install locked pip packages without dependencies: verified archives installed from a URL originally
    from that URL again (same PEP 610 origin), the other verified ones through a --find-links folder (index
    releases, like the original), both `--require-hashes`; the rest by `name==version` (warned) from pkgs_dir
    when it holds their wheels (offline), else from the index."""
    warnings: list[str] = []
    fixed = ["--no-deps", "--ignore-installed", "--no-compile"]
    direct = [a for a in archives if _direct_url(a)]
    if direct:  # installed from a URL originally: install from that URL again, so pip records the same origin
        install_direct(prefix, direct, fixed)
    archives = [a for a in archives if not _direct_url(a)]
    if archives:
        with tempfile.TemporaryDirectory(prefix="envguard-wheels-") as links:
            for archive in archives:
                os.symlink(archive.path.resolve(), Path(links) / archive.package.filename)
            offline = [*fixed, "--no-index", f"--find-links {shlex.quote(links)}"]
            if all(a.algorithm == "sha256" for a in archives):  # pip proves each file again as it installs
                lines = [
                    f"{a.package.name}=={a.package.version} --hash=sha256:{a.expected}\n" for a in archives
                ]
                requirements = Path(links) / "requirements.txt"
                requirements.write_text("".join(lines), encoding="utf-8")
                pip_install(prefix, ["-r", str(requirements)], [*offline, "--require-hashes"])
            else:  # md5 is no hash pip accepts; envguard proved the archives
                pip_install(prefix, [f"{a.package.name}=={a.package.version}" for a in archives], offline)
    if others:
        local = [] if pkgs_dir is None else [f"--find-links {shlex.quote(str(pkgs_dir))}"]
        if local and all(_has_wheel(pkgs_dir, p) for p in others):
            local.append("--no-index")
        pip_install(prefix, [f"{p.name}=={p.version}" for p in others], [*fixed, *local])
        names = ", ".join(p.name for p in others)
        warnings.append(
            f"pip package(s) {names} have no archive hash in the lock; installed by version (from --pkgs-dir "
            "or the index), not verified"
        )
    return warnings


def install_direct(prefix: Path, archives: Sequence[Archive], options: Sequence[str]) -> None:
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
        pip_install(prefix, ["-r", str(requirements)], [*options, "--require-hashes"])


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


# --- a fresh venv for a pip-only lock (verify) -------------------------------------------------------------

BOOTSTRAP = ("pip", "setuptools", "wheel")  # what `python -m venv` may install on its own


def find_python(version: str, implementation: str = "cpython") -> tuple[Path, str] | None:
    """An interpreter for a venv of `implementation version`: the exact version first, else the same
    major.minor (the check then reports the patch difference); from the running one and PATH. Returns
    (path, its version)."""
    import shutil
    import sys

    minor = ".".join(version.split(".")[:2])
    stem = "pypy" if implementation == "pypy" else "python"
    names = [f"{stem}{minor}", f"{stem}{minor.split('.')[0]}", stem]
    candidates = [Path(sys.executable), *(Path(p) for n in names if (p := shutil.which(n)))]
    found: list[tuple[Path, str]] = []
    for candidate in dict.fromkeys(candidates):
        facts = _interpreter_facts(candidate)
        if facts is not None and facts[0] == implementation and facts[1].startswith(f"{minor}."):
            found.append((candidate, facts[1]))
    exact = [item for item in found if item[1] == version]
    return (exact or found)[0] if found else None


def _interpreter_facts(python: Path) -> tuple[str, str] | None:
    """(implementation, version) of an interpreter, or None when it does not run (a pyenv shim, say)."""
    code = "import platform; print(platform.python_implementation().lower(), platform.python_version())"
    try:
        done = process.run([str(python), "-I", "-c", code], timeout=30)
    except (OSError, process.TimedOut):
        return None
    words = done.stdout.split()
    return (words[0], words[1]) if done.returncode == 0 and len(words) == 2 else None


def make_venv(python: Path, prefix: Path) -> None:
    """`python -m venv PREFIX` (with pip, from the interpreter's own ensurepip: offline)."""
    try:
        done = process.run([str(python), "-m", "venv", str(prefix)], timeout=300)
    except (OSError, process.TimedOut) as exc:
        raise BackendError(f"{python} -m venv {prefix} did not run ({exc})") from exc
    if done.returncode != 0:
        raise BackendError(
            f"{python} -m venv {prefix} failed (exit {done.returncode}): {one_line(done.stderr)[-300:]}"
        )


def remove_bootstrap(prefix: Path, locked: Sequence[Package]) -> None:
    """Uninstall what `python -m venv` installed that the lock does not have (pip last: it removes itself)."""
    have = {p.name for p in read_pip_packages(prefix)[0]}
    extra = [n for n in BOOTSTRAP if n in have and n not in {p.name for p in locked}]
    if not extra:
        return

    command = [str(interpreter(prefix)), "-m", "pip", "uninstall", "-y", "--disable-pip-version-check"]
    done = process.run([*command, *sorted(extra, key=lambda n: n == "pip")], timeout=300)
    if done.returncode != 0:
        raise BackendError(f"pip uninstall {' '.join(extra)} in {prefix} failed: {one_line(done.stderr)}")
