"""`%load_ext envguard` with envguard installed as the README advises — with pipx, in its own venv — in a
kernel whose environment holds IPython but none of envguard's dependencies: the README's recipe (envguard's
package folder alone on IPython's path) adds nothing to the environment, and `%envguard` drives the pipx
`envguard`, displaying the report and returning its JSON."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kernel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real venv with IPython and nothing of envguard's (no click, rich, rattler)."""
    venv = tmp_path_factory.mktemp("kernel") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "ipython"],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot install IPython into a venv here (offline?): {done.stderr[-500:]}")
    return venv


def test_load_ext_with_envguard_in_pipx(
    pipx_envguard: tuple[Path, Path], kernel_venv: Path, drifted: tuple[Path, Path], tmp_path: Path
) -> None:
    exe, own = pipx_envguard
    prefix, lock = drifted
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX")}
    env["PATH"] = f"{exe.parent}{os.pathsep}{env['PATH']}"
    before = tmp_path / "kernel-lock.yml"
    argv = [str(exe), "lock", str(kernel_venv), "--no-probe", "-o", str(before)]
    assert subprocess.run(argv, env=env, capture_output=True, check=False).returncode == 0
    # the README's recipe: envguard's package folder alone, on IPython's path (nothing in the environment)
    (site,) = (own / "lib").glob("python3*/site-packages")
    folder = tmp_path / "ipython" / "envguard"
    folder.mkdir(parents=True)
    (folder / "envguard").symlink_to(site / "envguard")
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-envguard.py").write_text(f"import sys; sys.path.append({str(folder)!r})\n")
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    script = tmp_path / "nb.ipy"
    check = f"%envguard check {prefix} --lock {lock}"
    script.write_text(
        f"%load_ext envguard\n{check}\nr = {check} --json\n"
        "print('clean', r.data()[0]['clean'], 'exit', r.exit_code)\n"
        "import importlib.util; print('click', importlib.util.find_spec('click'))\n"
    )
    ipython = [str(kernel_venv / "bin" / "ipython"), str(script)]
    done = subprocess.run(ipython, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No module named" not in done.stdout + done.stderr
    assert "cpuonly 2.0" in done.stdout and "clean False exit 1" in done.stdout, done.stdout
    assert "click None" in done.stdout  # the kernel's environment still has none of envguard's dependencies
    again = [str(exe), "check", str(kernel_venv), "--lock", str(before)]
    same = subprocess.run(again, env=env, capture_output=True, text=True, check=False)
    assert same.returncode == 0, same.stdout  # the recipe added no drift
