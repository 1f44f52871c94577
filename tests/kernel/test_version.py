"""`install_line`: the command that adds an optional extra the way envguard itself was installed (issue 43:
`verify --attest` said `pip install 'conda-envguard[attest]'`, which fails: envguard is not on PyPI)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.helpers import REPO

_ASK = "from envguard.version import install_line; print(install_line('attest'))"


def _asked(python: Path) -> str:
    done = subprocess.run([str(python), "-c", _ASK], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.slow
def test_an_editable_install_into_a_venv_says_pip_from_that_folder(tmp_path: Path) -> None:
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(REPO)], check=True, timeout=300
    )
    line = subprocess.run(
        [str(python), "-c", _ASK], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert line == f"{python} -m pip install -e {shlex.quote(f'{REPO}[attest]')}"
    # the line runs as printed (resolved, not installed: --dry-run)
    done = subprocess.run(
        [*shlex.split(line), "--dry-run", "-q"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_a_pipx_install_says_pipx(tmp_path: Path) -> None:
    home = tmp_path / "pipx"
    env = {**os.environ, "PIPX_HOME": str(home), "PIPX_BIN_DIR": str(tmp_path / "bin")}
    subprocess.run(
        [sys.executable, "-m", "pipx", "install", str(REPO)],
        check=True,
        capture_output=True,
        env=env,
        timeout=600,
    )
    python = home / "venvs" / "conda-envguard" / "bin" / "python"
    line = subprocess.run(
        [str(python), "-c", _ASK], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert line == f"pipx install --force {shlex.quote(f'{REPO}[attest]')}"
