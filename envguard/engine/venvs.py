"""A venv for a lock's pip packages: an interpreter of the locked Python (`find_python`), the venv made with
uv or `python -m venv` (`make_venv`), and what `python -m venv` installed on its own removed
(`remove_bootstrap`)."""

from __future__ import annotations

import platform
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from envguard import process
from envguard.engine import pipengine
from envguard.engine.pipengine import PipEngine
from envguard.errors import BackendError
from envguard.model import Package
from envguard.prefix.pip_dist import read_pip_packages
from envguard.prefix.probe import interpreter
from envguard.process import one_line

BOOTSTRAP = ("pip", "setuptools", "wheel")  # what `python -m venv` may install on its own


def find_python(version: str, implementation: str = "cpython") -> tuple[Path, str] | None:
    """An interpreter for a venv of `implementation version`: the exact version first, else the same
    major.minor (the check then reports the patch difference); from the running one and PATH. Returns
    (path, its version)."""
    minor = ".".join(version.split(".")[:2])
    stem = "pypy" if implementation == "pypy" else "python"
    names = [f"{stem}{minor}", f"{stem}{minor.split('.')[0]}", stem]
    mine = (platform.python_implementation().lower(), platform.python_version())
    if mine == (implementation, version):  # the running interpreter: known without starting one
        return Path(sys.executable), version
    first: tuple[Path, str] | None = None
    if mine[0] == implementation and mine[1].startswith(f"{minor}."):
        first = (Path(sys.executable), mine[1])
    for candidate in dict.fromkeys(Path(p) for n in names if (p := shutil.which(n))):
        facts = _interpreter_facts(
            candidate
        )  # each start costs (a pyenv shim: ~0.5 s): stop at the exact one
        if facts is not None and facts[0] == implementation and facts[1].startswith(f"{minor}."):
            if facts[1] == version:
                return candidate, version
            first = first or (candidate, facts[1])
    return first


def _interpreter_facts(python: Path) -> tuple[str, str] | None:
    """(implementation, version) of an interpreter, or None when it does not run (a pyenv shim, say)."""
    code = "import platform; print(platform.python_implementation().lower(), platform.python_version())"
    try:
        done = process.run([str(python), "-I", "-c", code], timeout=30)
    except (OSError, process.TimedOut):
        return None
    words = done.stdout.split()
    return (words[0], words[1]) if done.returncode == 0 and len(words) == 2 else None


def make_venv(python: Path, prefix: Path, engine: PipEngine | None = None) -> None:
    """`uv venv --python PYTHON PREFIX` with the uv engine (no pip in it: the lock's packages are all it
    gets), else `python -m venv PREFIX` (with pip, from the interpreter's own ensurepip: offline)."""
    engine = engine or pipengine.select()
    command = [str(python), "-m", "venv", str(prefix)]
    if engine.name == "uv":
        command = [engine.uv, "venv", "--no-config", "--quiet", "--python", str(python), str(prefix)]
    try:
        done = process.run(command, timeout=300)
    except (OSError, process.TimedOut) as exc:
        raise BackendError(f"{' '.join(command[:2])} ... {prefix} did not run ({exc})") from exc
    if done.returncode != 0 and engine.name == "uv":  # an interpreter uv cannot target: venv's own way
        make_venv(python, prefix, pipengine.PipEngine("pip", why="uv venv failed"))
        return
    if done.returncode != 0:
        raise BackendError(
            f"{' '.join(command[:2])} ... {prefix} failed (exit {done.returncode}): "
            f"{one_line(done.stderr)[-300:]}"
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
