"""`envguard export` of environments the real conda made (plain, `--clone`, `--file explicit.txt`, a
conda-lock.yml through conda-lockfiles, `conda-lock install`) → `conda env create` → `envguard check` against
the source's lock.

conda records every package of a cloned / explicit / locked environment as requested, with its channel and
build: a pinned export must still write only what a user would have asked for (the leaves), with versions and
without builds or channels, so the file solves on another OS."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import MakePrefix, envguard
from tests.realconda import Conda, package_keys

pytestmark = pytest.mark.slow

SPECS = ("python=3.11", "numpy=1.26", "six")


@pytest.fixture
def source(conda: Conda, tmp_path: Path) -> tuple[Path, Path]:
    """A conda-made environment and envguard's lock of it."""
    prefix = tmp_path / "src"
    conda.run("create", "--yes", "--prefix", str(prefix), *SPECS)
    lock = tmp_path / "lock" / "conda-lock.yml"
    lock.parent.mkdir()
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    return prefix, lock


def made_by(how: str, conda: Conda, src: Path, lock: Path, tmp_path: Path) -> Path:
    """A copy of `src` made the way conda users make copies."""
    target = tmp_path / how
    if how == "clone":
        conda.run("create", "--yes", "--prefix", str(target), "--clone", str(src))
    elif how == "explicit":
        explicit = tmp_path / "explicit.txt"
        explicit.write_text(conda.run("list", "--explicit", "--md5", "-p", str(src)).stdout)
        conda.run("create", "--yes", "--prefix", str(target), "--file", str(explicit))
    elif how == "conda-lockfiles":
        conda.run("create", "--yes", "--prefix", str(target), "--file", str(lock))
    else:  # the conda-lock tool itself, driving the real conda
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "conda_lock",
                "install",
                "--conda",
                str(conda.kit.exe),
                "-p",
                str(target),
                str(lock),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    return target


def export(prefix: Path, mode: str, out: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert envguard("export", str(prefix), f"--{mode}", "-o", str(out)) == 0, capsys.readouterr().err
    dependencies = yaml.safe_load(out.read_text())["dependencies"]
    return [d for d in dependencies if isinstance(d, str)]


def check_clean(
    conda: Conda, yml: Path, lock: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conda.run("env", "create", "--yes", "--file", str(yml), "--prefix", str(target))
    capsys.readouterr()
    code = envguard("check", str(target), "--lock", str(lock))
    assert code == 0, capsys.readouterr().out


@pytest.mark.parametrize("how", ["clone", "explicit", "conda-lockfiles", "conda-lock"])
def test_pinned_export_of_a_conda_made_copy_is_portable(
    conda: Conda, source: tuple[Path, Path], tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src, lock = source
    copy = made_by(how, conda, src, lock, tmp_path)
    assert package_keys(conda.listed(copy)) == package_keys(conda.listed(src))
    pinned = export(copy, "pinned", tmp_path / "pinned.yml", capsys)
    assert pinned == ["numpy=1.26.4", "python=3.11.9", "six=1.16.0"], pinned
    check_clean(conda, tmp_path / "pinned.yml", lock, tmp_path / "from-pinned", capsys)
    history = export(copy, "from-history", tmp_path / "history.yml", capsys)
    assert all(re.fullmatch(r"[a-z0-9_.-]+", line) for line in history), history  # no builds, no channels
    full = export(copy, "full", tmp_path / "full.yml", capsys)
    assert len(full) == 4 and all("::" not in line for line in full)
    check_clean(conda, tmp_path / "full.yml", lock, tmp_path / "from-full", capsys)


@pytest.mark.parametrize("mode", ["pinned", "full", "from-history"])
def test_export_of_the_source_round_trips_through_conda_env_create(
    conda: Conda, source: tuple[Path, Path], tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src, lock = source
    lines = export(src, mode, tmp_path / "env.yml", capsys)
    if mode != "full":
        assert all("::" not in line and line.count("=") <= 1 for line in lines), lines
    check_clean(conda, tmp_path / "env.yml", lock, tmp_path / "new", capsys)
    capsys.readouterr()
    assert envguard("snapshot", str(tmp_path / "new"), "--no-probe") == 0
    ours = json.loads(capsys.readouterr().out)
    assert {p["name"] for p in ours["packages"]} == {p["name"] for p in conda.listed(src)}


@pytest.mark.parametrize("source_kind", ["lock", "pixi", "no-history"])
def test_export_of_a_history_less_cuda_source_keeps_the_cuda_choice(
    source_kind: str,
    conda: Conda,
    make_prefix: MakePrefix,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gpu = make_prefix(["pytorch=2.1=*cuda11.8*", "python=3.11"], name="gpu", cuda="12.4", history=False)
    lock = tmp_path / "lock" / "conda-lock.yml"
    lock.parent.mkdir()
    assert envguard("lock", str(gpu), "--no-probe", "-o", str(lock)) == 0
    source = {"lock": lock, "no-history": gpu, "pixi": tmp_path / "pixi.lock"}[source_kind]
    if source_kind == "pixi":
        conda.run("export", "-p", str(gpu), "--format", "rattler-lock-v6", "--file", str(source))
    lines = export(source, "pinned", tmp_path / "gpu.yml", capsys)
    assert "pytorch=2.1.0=*cuda11.8*" in lines, lines
    assert all("::" not in line for line in lines)
    # a machine without a driver: the solve fails loudly instead of quietly picking the CPU build
    done = conda.run(
        "env",
        "create",
        "--yes",
        "--file",
        str(tmp_path / "gpu.yml"),
        "--prefix",
        str(tmp_path / "cpu-machine"),
        check=False,
        env={"CONDA_OVERRIDE_CUDA": ""},
    )
    assert done.returncode != 0 and "UnsatisfiableError" in done.stderr
    target = tmp_path / "gpu-machine"
    conda.run(
        "env",
        "create",
        "--yes",
        "--file",
        str(tmp_path / "gpu.yml"),
        "--prefix",
        str(target),
        env={"CONDA_OVERRIDE_CUDA": "12.4"},
    )
    capsys.readouterr()
    assert envguard("check", str(target), "--lock", str(lock)) == 0, capsys.readouterr().out
