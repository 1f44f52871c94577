"""What `envguard export` writes, `envguard check -f` and `envguard diff` accept against the same environment:
a property over the fixture environments (rattler-made, conda-made, cloned, with pip packages, CUDA, without
history) and a plain venv, in every export mode."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, envguard
from tests.realconda import Conda

pytestmark = pytest.mark.slow

MODES = ("pinned", "full", "from-history")


def pip_from_index(site_or_venv: Path, wheels: Path, *reqs: str, venv: bool = False) -> None:
    """Real pip from a find-links index (no direct_url.json: an index release, exported as name==version)."""
    base = [str(site_or_venv / "bin" / "python"), "-m", "pip"] if venv else [sys.executable, "-m", "pip"]
    target = [] if venv else ["--target", str(next((site_or_venv / "lib").glob("python3*/site-packages")))]
    subprocess.run(
        [
            *base,
            "install",
            "--no-index",
            "--find-links",
            str(wheels),
            "--no-deps",
            "--no-compile",
            "--disable-pip-version-check",
            *target,
            *reqs,
        ],
        check=True,
        capture_output=True,
    )


def rattler_env(make_prefix: MakePrefix, channels: dict[str, Path], conda: Conda, tmp: Path) -> Path:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "pip"], name="rattler")
    pip_from_index(prefix, channels["wheels"], "tinyproj==1.0.0")
    return prefix


def rattler_cuda_no_history(
    make_prefix: MakePrefix, channels: dict[str, Path], conda: Conda, tmp: Path
) -> Path:
    return make_prefix(["pytorch=2.1=*cuda11.8*", "python=3.11"], name="gpu", cuda="12.4", history=False)


def conda_env(make_prefix: MakePrefix, channels: dict[str, Path], conda: Conda, tmp: Path) -> Path:
    prefix = tmp / "by-conda"
    conda.run("create", "--yes", "--prefix", str(prefix), "python=3.11", "six", "requests=2.31")
    pip_from_index(prefix, channels["wheels"], "tinyproj==1.1.0", "other-pkg==0.3.0")
    return prefix


def conda_clone(make_prefix: MakePrefix, channels: dict[str, Path], conda: Conda, tmp: Path) -> Path:
    source = tmp / "clone-source"
    conda.run("create", "--yes", "--prefix", str(source), "python=3.11", "numpy=1.26")
    conda.run("create", "--yes", "--prefix", str(tmp / "clone"), "--clone", str(source))
    return tmp / "clone"


def venv(make_prefix: MakePrefix, channels: dict[str, Path], conda: Conda, tmp: Path) -> Path:
    folder = tmp / "project" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, capture_output=True)
    pip_from_index(folder, channels["wheels"], "tinyproj==1.0.0", venv=True)
    return folder


ENVS: dict[str, Callable[[MakePrefix, dict[str, Path], Conda, Path], Path]] = {
    "rattler+pip": rattler_env,
    "rattler-cuda-no-history": rattler_cuda_no_history,
    "conda+pip": conda_env,
    "conda-clone": conda_clone,
    "venv": venv,
}


@pytest.mark.parametrize("kind", sorted(ENVS))
def test_export_then_check_and_diff_report_no_drift(
    kind: str,
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    conda: Conda,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix = ENVS[kind](make_prefix, channels, conda, tmp_path)
    for mode in MODES:
        out = tmp_path / f"{mode}.yml"
        capsys.readouterr()
        assert envguard("export", str(prefix), f"--{mode}", "-o", str(out)) == 0, capsys.readouterr().err
        capsys.readouterr()
        code = envguard("check", str(prefix), "-f", str(out))
        assert code == 0, f"{kind} --{mode}:\n{out.read_text()}\n{capsys.readouterr().out}"
        code = envguard("diff", str(prefix), str(out))
        assert code == 0, f"{kind} --{mode} (diff):\n{out.read_text()}\n{capsys.readouterr().out}"


def test_a_venv_exports_under_its_project_name(
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    conda: Conda,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import yaml

    from envguard.create.naming import validate

    prefix = venv(make_prefix, channels, conda, tmp_path)  # tmp/project/.venv
    out = tmp_path / "venv.yml"
    assert envguard("export", str(prefix), "-o", str(out)) == 0
    name = yaml.safe_load(out.read_text())["name"]
    assert name == "project" and validate(name) == name
    # conda reads it: the name is what `conda env create` would make (its dry run needs no solve of pip lines)
    assert conda.run("env", "create", "--file", str(out), "--dry-run", "--json", check=False).returncode in (
        0,
        1,
    )
