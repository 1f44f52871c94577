"""envguard's locks through the real conda: `conda create --file conda-lock.yml` (conda-lockfiles 0.2.2)
installs what `envguard lock` wrote (live and -f) and gives the identical environment; `lock -f` with
`nodefaults` stays fresh; the header's "Reproduce:" line reproduces the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import envguard
from tests.realconda import Conda, package_keys, same_packages

pytestmark = pytest.mark.slow


def snapshot(prefix: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert envguard("snapshot", str(prefix), "--no-probe") == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def install_lock(conda: Conda, lock: Path, prefix: Path) -> None:
    """`conda create --file conda-lock.yml`: conda-lockfiles only recognises that exact file name."""
    assert lock.name == "conda-lock.yml"
    conda.run("create", "--yes", "--prefix", str(prefix), "--file", str(lock))


def test_a_live_lock_installs_with_conda_create_file(
    conda: Conda, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "src"
    conda.run("create", "--yes", "--prefix", str(source), "python=3.11", "numpy=1.26", "six")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(source), "--no-probe", "-o", str(lock)) == 0
    target = tmp_path / "dst"
    install_lock(conda, lock, target)
    assert package_keys(conda.listed(target)) == package_keys(conda.listed(source))
    same_packages(conda.listed(target), snapshot(source, capsys))
    capsys.readouterr()
    assert envguard("check", str(target), "--lock", str(lock)) == 0, capsys.readouterr().out


def test_a_solved_lock_installs_with_conda_create_file(
    conda: Conda, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "environment.yml").write_text(
        f"channels: [{channels['forge'].resolve().as_uri()}]\ndependencies: [python=3.11, numpy=1.26, zlib]\n"
    )
    lock = folder / "conda-lock.yml"
    assert envguard("lock", "-f", str(folder / "environment.yml"), "--no-cuda", "-o", str(lock)) == 0
    target = tmp_path / "dst"
    install_lock(conda, lock, target)
    assert {p["name"] for p in conda.listed(target)} == {"python", "numpy", "zlib"}
    same_packages(conda.listed(target), snapshot(lock, capsys))
    capsys.readouterr()
    assert envguard("check", str(target), "--lock", str(lock)) == 0, capsys.readouterr().out


def test_nodefaults_does_not_make_a_just_written_lock_stale(
    conda: Conda, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    yml = folder / "environment.yml"
    yml.write_text(
        f"channels: [{channels['forge'].resolve().as_uri()}, nodefaults]\ndependencies: [python=3.11]\n"
    )
    lock = folder / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock)) == 0
    lines = lock.read_text().splitlines(keepends=True)
    body = "".join(line for line in lines if "envguard lock " not in line)
    assert "nodefaults" not in body, "conda-lock drops nodefaults from the lock's channels"
    capsys.readouterr()
    assert envguard("check", "--lock", str(lock), "--lock-fresh") == 0, capsys.readouterr().out
    # a lock written before the fix (or by another tool) that lists it is fresh too
    old = folder / "old" / "conda-lock.yml"
    old.parent.mkdir()
    (old.parent / "environment.yml").write_text(yml.read_text())
    text = lock.read_text().replace(
        "  - url: file://", "  - url: nodefaults\n    used_env_vars: []\n  - url: file://", 1
    )
    old.write_text(text)
    assert envguard("check", "--lock", str(old), "--lock-fresh") == 0, capsys.readouterr().out
    target = tmp_path / "dst"
    install_lock(conda, lock, target)
    capsys.readouterr()
    assert envguard("check", str(target), "--lock", str(lock)) == 0, capsys.readouterr().out


def test_lock_f_honours_conda_override_cuda_like_create(
    conda: Conda,
    channels: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    chans = f"[{channels['pytorch'].resolve().as_uri()}, {channels['forge'].resolve().as_uri()}]"
    (folder / "environment.yml").write_text(
        f"channels: {chans}\ndependencies: [python=3.11, 'pytorch=2.1=*cuda11.8*']\n"
    )
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.4")
    capsys.readouterr()
    assert envguard("lock", "-f", "environment.yml", "-o", "conda-lock.yml", cwd=folder) == 0, (
        capsys.readouterr().err
    )
    text = (folder / "conda-lock.yml").read_text()
    assert "--cuda 12.4" in text, "the Reproduce line says what the variable chose"
    target = tmp_path / "dst"
    install_lock(conda, folder / "conda-lock.yml", target)
    builds = {p["name"]: p["build_string"] for p in conda.listed(target)}
    assert "cuda11.8" in builds["pytorch"]
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "")  # conda's "no GPU here": like --no-cuda
    capsys.readouterr()
    assert envguard("lock", "-f", "environment.yml", "-o", "cpu.yml", cwd=folder) == 2
    assert "__cuda" in capsys.readouterr().err
