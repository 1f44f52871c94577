"""`create --lock` of a CPU lock on a CUDA machine does not warn "the solver chose a CPU build": no solver
ran and the lock asked for exactly those builds. A solve that picks CPU on a GPU machine still warns."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import envguard

CPU_WARNING = "the solver chose a CPU build"


def _yml(folder: Path, channels: dict[str, Path], deps: list[str]) -> Path:
    lines = ["name: cpu", "channels:"]
    lines += [f"  - {channels[c].resolve().as_uri()}" for c in ("pytorch", "forge")]
    lines += ["platforms: [linux-64]", "dependencies:", *[f"  - {d}" for d in deps]]
    path = folder / "environment.yml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "deps", [["python=3.11", "pytorch=2.1", "cpuonly"], ["python=3.11", "pytorch=2.1=*cpu*"]]
)
def test_a_cpu_lock_on_a_gpu_machine_does_not_warn(
    deps: list[str],
    channels: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    yml = _yml(tmp_path, channels, deps)
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock)) == 0
    assert "py3.11_cpu_0" in lock.read_text(encoding="utf-8")
    capsys.readouterr()
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.4")  # this machine "has" a GPU
    assert envguard("create", "--lock", str(lock), "-p", str(tmp_path / "env")) == 0
    err = capsys.readouterr().err
    assert CPU_WARNING not in err, err
    assert list((tmp_path / "env" / "conda-meta").glob("pytorch-2.1.0-py3.11_cpu_0.json"))


def test_a_solve_that_picks_cpu_on_a_gpu_machine_still_warns(
    channels: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # pytorch 2.1 with a python only the CPU build accepts there: the solver must fall back to CPU
    yml = _yml(tmp_path, channels, ["python=3.11", "pytorch=2.1", "pytorch-mutex=*=cpu"])
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.4")
    assert envguard("create", "-f", str(yml), "-p", str(tmp_path / "env"), "--dry-run") == 0
    assert CPU_WARNING in capsys.readouterr().err
