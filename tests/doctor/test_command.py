"""`envguard doctor` end to end: a real prefix, its interpreter probed for torch, NVML absent, files
checked."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, envguard

CPU_TORCH_ONLY = pytest.mark.skipif(
    "+cpu" not in importlib.metadata.version("torch"),
    reason="the CUDA torch wheel is installed: no CPU torch to put beside a CUDA torchvision (the mismatch "
    "this test builds); the CPU wheel's run covers it",
)


@pytest.fixture
def prefix(make_prefix: MakePrefix) -> Path:
    return make_prefix(["python=3.11", "numpy=1.26", "zlib"])


def doctor_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = envguard("doctor", *argv, "--json")
    return code, json.loads(capsys.readouterr().out)


def checks(data: dict[str, object]) -> dict[str, dict[str, str]]:
    findings = data["findings"]
    assert isinstance(findings, list)
    return {f["check"]: f for f in findings}


def test_doctor_on_a_healthy_prefix(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = doctor_json(capsys, str(prefix))
    assert data["schema_version"] == 1
    found = checks(data)
    assert found["files"]["status"] == "PASS"
    # what the torch build means depends on which wheel this environment runs (CPU, or CUDA: +cu130 from PyPI)
    # and on the machine: the verdict doctor's rules give for the facts it measured
    facts = data["facts"]
    cuda_build = facts["torch"]["torch_cuda"] is not None  # type: ignore[index]
    present = (facts["presence"] or {}).get("devices") or []  # type: ignore[index,union-attr]
    gpus = len(facts["nvml"]["gpus"]) or len(present)  # type: ignore[index]
    if not gpus:
        assert found["torch build"]["status"] == ("INFO" if cuda_build else "PASS"), found["torch build"]
    elif not cuda_build:
        assert found["torch build"]["status"] == "FAIL"  # a CPU build on a GPU machine
    assert found["num_workers"]["status"] == "INFO"
    assert isinstance(data["recommended_workers"], int) and data["recommended_workers"] >= 1
    assert all(f["fix"] for f in found.values() if f["status"] != "PASS")
    if not data["facts"]["nvml"]["gpus"]:  # type: ignore[index]
        assert found["NVIDIA GPU"]["status"] == "INFO" and "no GPU" in found["NVIDIA GPU"]["evidence"]
        assert code == 0


def test_doctor_finds_a_damaged_prefix(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    next((prefix / "share" / "zlib").iterdir()).unlink()
    code, data = doctor_json(capsys, str(prefix), "--no-hashes")
    assert code == 1
    assert checks(data)["files"]["status"] == "FAIL" and "zlib" in checks(data)["files"]["evidence"]


def test_doctor_checks_the_data_folder(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    for i in range(3):
        (folder / f"{i}.bin").write_bytes(b"x" * 100)
    _code, data = doctor_json(capsys, str(prefix), "--data", str(folder))
    disk = data["facts"]["disk"]  # type: ignore[index]
    assert disk["files"] == 3 and disk["bytes"] == 300 and disk["fstype"] != "unknown"
    assert checks(data)["data folder"]["status"] in ("PASS", "INFO", "WARN")


def test_doctor_human_and_markdown_output(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    envguard("doctor", str(prefix))
    out = capsys.readouterr().out
    assert "Checklist" in out and "num_workers" in out and "doctor:" in out
    envguard("doctor", str(prefix), "--markdown")
    assert capsys.readouterr().out.startswith("| Status | Category | Check |")


def test_doctor_without_torch_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    code, data = doctor_json(capsys, str(venv))
    found = checks(data)
    assert (
        found["torch and CUDA"]["status"] == "INFO" and "not installed" in found["torch and CUDA"]["evidence"]
    )
    assert found["files"]["status"] == "INFO" and code == 0


def test_doctor_rejects_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lock = tmp_path / "conda-lock.yml"
    lock.write_text("version: 1\n")
    assert envguard("doctor", str(lock)) == 2
    assert "live environment" in capsys.readouterr().err


def test_doctor_fails_a_tiny_shm(prefix: Path, tiny_shm: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = doctor_json(capsys, str(prefix))
    shm = checks(data)["/dev/shm"]
    assert (
        code == 1
        and shm["status"] == "FAIL"
        and str(tiny_shm) in shm["evidence"]
        and "1.0 MiB" in shm["evidence"]
    )


@pytest.mark.parametrize("columns", [80, 120])
def test_doctor_fits_the_terminal(
    columns: int, prefix: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    envguard("doctor", str(prefix))
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= columns and not any("…" in line for line in lines)
    header = next(line for line in lines if "Status" in line)
    assert ("Check: evidence" in header) is (columns < 100)  # narrow: the check heads its evidence


def test_doctor_writes_its_report_file_on_bad_input(tmp_path: Path) -> None:
    report = tmp_path / "doctor.md"
    assert envguard("doctor", str(tmp_path / "no-such-env"), "--markdown", "-o", str(report)) == 2
    assert report.read_text().startswith("### ❌ envguard doctor: error (exit 2)")
    assert "no-such-env" in report.read_text()


def test_doctor_on_a_corrupt_record_gives_the_fix(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: INFO "point SOURCE at a conda environment", for a folder that is one with a broken record."""
    record = next((prefix / "conda-meta").glob("zlib-*.json"))
    record.write_text(record.read_text()[:40])
    os.utime(record, (time.time() - 3600,) * 2)  # broken long ago (a young one is being written)
    code, data = doctor_json(capsys, str(prefix))
    files = checks(data)["files"]
    assert files["status"] == "FAIL" and code == 1
    assert record.name in files["evidence"] and "corrupt conda-meta record" in files["evidence"]
    assert (
        "reinstall the package whose record is named" in files["fix"] and "remove that file" in files["fix"]
    )
    assert "point SOURCE" not in files["fix"]


@pytest.mark.slow
@CPU_TORCH_ONLY
def test_doctor_names_a_cpu_torch_beside_a_cuda_torchvision(
    mismatched_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = doctor_json(capsys, str(mismatched_env), "--no-hashes")
    found = checks(data)["torch family"]
    assert code == 1 and found["status"] == "FAIL", found
    assert "import torchvision: RuntimeError: operator torchvision::nms does not exist" in found["evidence"]
    assert "torch 2.13.0+cpu (pip) (cpu), torchvision 0.29.1 (pip) (default wheel)" in found["evidence"]
    assert f"{mismatched_env}/bin/python -m pip install --index-url" in found["fix"]
    assert checks(data)["free space: environment"]["status"] in ("PASS", "WARN")
