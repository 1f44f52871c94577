"""A world shaped like a user's: envguard installed with pipx (its own venv, as the README advises) beside a
conda environment of conda and pip packages, the project run from a subfolder with nothing activated. The
README's main flow (check -> sync -> check) runs in it with the pipx `envguard`, and envguard never takes its
own venv for the environment meant, nor changes it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, pip_install

BASE = ["python=3.11", "numpy=1.26", "requests=2.32.3", "zlib"]
TINY = "tinyproj-1.0.0-py3-none-any.whl"

pytestmark = pytest.mark.slow


def user(exe: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The pipx `envguard` as a user's shell runs it: nothing activated, no PYTHONPATH of ours."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX")}
    env["PATH"] = f"{exe.parent}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        [str(exe), *argv], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=900
    )


def tree(folder: Path) -> list[str]:
    """Every file and folder under `folder` but the bytecode Python writes as it imports."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts)


def test_check_sync_check_from_a_subfolder_with_envguard_in_pipx(
    pipx_envguard: tuple[Path, Path],
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    tmp_path: Path,
) -> None:
    exe, own = pipx_envguard
    own_before = tree(own)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    here = project / "src" / "pkg"
    here.mkdir(parents=True)
    prefix = make_prefix(BASE)
    pip_install(prefix, str(channels["wheels"] / TINY))
    lock = project / "conda-lock.yml"
    done = user(exe, "lock", str(prefix), "--no-probe", "--include-local", "-o", str(lock), cwd=here)
    assert done.returncode == 0, done.stderr

    # nothing active, nothing configured: one line, exit 2, never envguard's own venv
    for argv in (("check",), ("sync", "--yes"), ("smoke",), ("doctor",)):
        done = user(exe, *argv, cwd=here)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert "no environment given and none active" in line and "[tool.envguard] in the project's" in line
        assert str(own) not in done.stdout + done.stderr
    # asked to sync its own venv: refused first, envguard still there
    done = user(exe, "sync", str(own), "--lock", str(lock), "--yes", cwd=here)
    assert done.returncode == 2 and "holds envguard's own environment" in done.stderr, done.stderr
    assert user(exe, "--version", cwd=here).returncode == 0

    # the project names its environment; the README's flow, from the subfolder, with no SOURCE
    relative = os.path.relpath(prefix, project)
    (project / "pyproject.toml").write_text(f'[tool.envguard]\nenvironment = "{relative}"\n')
    done = user(exe, "check", cwd=here)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"OK: {prefix} matches {lock}")
    make_prefix(["python=3.11", "numpy=2.0", "zlib", "six"])  # numpy upgraded, requests gone, six added
    pip_install(prefix, "--upgrade", str(channels["wheels"] / "tinyproj-1.1.0-py3-none-any.whl"))
    done = user(exe, "check", cwd=here)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "numpy" in done.stdout and "tinyproj" in done.stdout and f"envguard sync {prefix}" in done.stdout
    done = user(exe, "sync", "--yes", "--backend", "embedded", cwd=here)
    assert done.returncode == 0, done.stdout + done.stderr
    done = user(exe, "check", cwd=here)
    assert (done.returncode, done.stdout) == (0, f"OK: {prefix} matches {lock}\n"), done.stderr
    assert tree(own) == own_before  # nothing of envguard's own venv changed
