"""Install an environment.yml's `pip:` requirements with the environment's own pip, as `conda env create`
does."""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path

from envguard import process
from envguard.engine.archives import Archive
from envguard.engine.backends.base import one_line
from envguard.errors import BackendError
from envguard.model import Package


def pip_install(
    prefix: Path,
    requirements: Sequence[str],
    options: Sequence[str] = (),
    *,
    cwd: Path | None = None,
    timeout: float | None = None,
) -> None:
    """`<prefix python> -m pip install --prefix PREFIX [options] requirements`; failures quote pip."""
    from envguard.engine.backends.cli import timeout_seconds
    from envguard.prefix.probe import interpreter

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
    """Install locked pip packages without dependencies: verified archives through a --find-links folder (so
    they install as index releases, like the original), the rest by `name==version` (warned) from pkgs_dir
    when it holds their wheels (offline), else from the index."""
    warnings: list[str] = []
    fixed = ["--no-deps", "--ignore-installed", "--no-compile"]
    if archives:
        with tempfile.TemporaryDirectory(prefix="envguard-wheels-") as links:
            for archive in archives:
                os.symlink(archive.path.resolve(), Path(links) / archive.package.filename)
            pins = [f"{a.package.name}=={a.package.version}" for a in archives]
            pip_install(prefix, pins, [*fixed, "--no-index", f"--find-links {shlex.quote(links)}"])
    if others:
        local = [] if pkgs_dir is None else [f"--find-links {shlex.quote(str(pkgs_dir))}"]
        if local and all(_has_wheel(pkgs_dir, p) for p in others):
            local.append("--no-index")
        pip_install(prefix, [f"{p.name}=={p.version}" for p in others], [*fixed, *local])
        names = ", ".join(p.name for p in others)
        warnings.append(
            f"pip package(s) {names} have no archive hash in the lock; installed by version (from --pkgs-dir "
            "or the index), "
            "not verified"
        )
    return warnings


def _has_wheel(folder: Path | None, package: Package) -> bool:
    if folder is None:
        return False
    stem = package.name.replace("-", "_")
    return any(folder.glob(f"{stem}-{package.version}-*.whl")) or any(
        folder.glob(f"{package.name}-{package.version}*")
    )
