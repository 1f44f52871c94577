"""The smoke tests' environment: a real prefix with python and numpy (smoke runs torch from the test's own
interpreter when the prefix has none)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import MakePrefix


@pytest.fixture
def prefix(make_prefix: MakePrefix) -> Path:
    return make_prefix(["python=3.11", "numpy=1.26"])


@pytest.fixture(scope="session")
def numpy1_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second real environment: a venv that reaches this interpreter's torch through a .pth file but has
    its own NumPy 1.26.4 (pip-installed into its site-packages, found first)."""
    import subprocess
    import sys
    import sysconfig

    env = tmp_path_factory.mktemp("numpy1") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), "numpy==1.26.4"],
        capture_output=True,
        text=True,
    )
    if installed.returncode != 0:
        pytest.skip(f"numpy 1.26.4 cannot be installed here: {installed.stderr.strip()[-200:]}")
    (site / "zz_envguard_base.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env
