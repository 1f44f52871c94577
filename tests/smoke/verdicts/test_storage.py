"""verdicts/storage.py: read speed cold vs warm, the disk classified from measured latency, the dataset
against the page cache, and what decoding costs: real files read cold and warm, real JPEGs decoded with PIL in
real DataLoader workers. Timings are bounded, never asserted."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from envguard.machine import disk
from envguard.smoke import readpasses
from envguard.smoke.verdicts import storage
from tests.helpers import by_check, envguard, smoke_json

FAST = ("--budget", "10", "--workers", "0,2", "--batch-size", "8")
SHM = Path("/dev/shm")
DataFiles = Callable[..., int]
Jpegs = Callable[..., None]
RealDisk = Callable[[Path], None]


def test_a_folder_in_memory_is_not_reported_as_cold(tmp_path: Path, data_files: DataFiles) -> None:
    if not SHM.is_dir() or disk.mount_of(SHM)[1] not in disk.MEMORY_FS:
        pytest.skip("no tmpfs at /dev/shm")
    folder = Path(os.path.realpath(SHM)) / f"envguard-storage-{os.getpid()}"
    try:
        data_files(folder, count=60)
        result = readpasses.measure(folder, budget_s=10)
    finally:
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        folder.rmdir()
    assert result.in_memory and not result.dropped
    assert "served from memory (tmpfs" in storage.read_speed(result).evidence
    latency = storage.disk_class(result)
    assert latency.status == "INFO" and "not measured cold" in latency.evidence
    assert "unmeasured cold rate" in storage.page_cache(result).evidence


def test_page_cache_verdicts_against_the_ram(
    tmp_path: Path, data_files: DataFiles, real_disk: RealDisk
) -> None:
    real_disk(tmp_path)
    written = data_files(tmp_path / "data", count=40)
    result = readpasses.measure(tmp_path / "data", budget_s=10)
    fits = storage.page_cache(result)
    assert (
        fits.status == "PASS"
        and "fits in the page cache" in fits.evidence
        and "later epochs at warm" in fits.evidence
    )
    tight = storage.page_cache(result, available=int(written * 1.5))
    assert tight.status == "INFO" and "only just" in tight.evidence
    big = storage.page_cache(result, available=written // 2)
    assert big.status == "WARN" and "every epoch reads from the disk at random cold" in big.evidence
    assert "shards" in big.fix


def test_disk_classified_from_measured_latency(
    tmp_path: Path, data_files: DataFiles, real_disk: RealDisk
) -> None:
    real_disk(tmp_path)
    data_files(tmp_path / "data", count=40)
    result = readpasses.measure(tmp_path / "data", budget_s=10)
    measured = storage.disk_class(result)
    assert measured.status == "PASS" and f"{result.cold_latency_ms():.3f} ms" in measured.evidence

    def at(ms: float) -> str:
        slow = tuple(dataclasses.replace(p, median_first_ms=ms) if p.cold else p for p in result.passes)
        finding = storage.disk_class(dataclasses.replace(result, passes=slow))
        return f"{finding.status} {finding.evidence}"

    assert at(0.1).startswith("PASS") and "NVMe-like" in at(0.1)
    assert at(0.8).startswith("PASS") and "SSD-like" in at(0.8)
    assert at(9.0).startswith("WARN") and "HDD-like or remote" in at(9.0)


def test_data_reports_cold_and_warm_reads(
    prefix: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    data_files: DataFiles,
    real_disk: RealDisk,
) -> None:
    real_disk(tmp_path)
    data_files(tmp_path / "data")
    _code, data = smoke_json(capsys, str(prefix), *FAST, "--data", str(tmp_path / "data"))
    report = data["storage"]
    assert report["dropped"] and report["method"] == "fadvise" and report["files_total"] == 300
    cold = {(p["order"], p["cold"]): p for p in report["passes"]}
    assert set(cold) == {("sequential", True), ("random", True), ("sequential", False)}
    assert 0 < cold["random", True]["mb_per_s"] < cold["sequential", False]["mb_per_s"]
    checks = by_check(data)
    assert checks["read speed cold vs warm"]["category"] == "storage"
    assert "cold (page cache dropped per file" in checks["read speed cold vs warm"]["evidence"]
    assert checks["fits in the page cache"]["status"] == "PASS"
    assert "decode" not in checks  # only with --decode
    envguard("smoke", str(prefix), *FAST, "--data", str(tmp_path / "data"))
    out = capsys.readouterr().out
    assert "Storage test of" in out and "cold random" in out and "warm sequential" in out


def test_warm_small_files_are_not_called_cpu_bound(
    prefix: Path, capsys: pytest.CaptureFixture[str], data_files: DataFiles
) -> None:
    """Files served from memory cost less per sample than the DataLoader itself: no efficiency FAIL and no
    'CPU-bound' (the old sweep said CPU-bound at efficiency 0.06-0.19 here)."""
    if not SHM.is_dir() or disk.mount_of(SHM)[1] not in disk.MEMORY_FS:
        pytest.skip("no tmpfs at /dev/shm")
    folder = Path(os.path.realpath(SHM)) / f"envguard-warm-{os.getpid()}"
    try:
        data_files(folder, count=300)
        _code, data = smoke_json(capsys, str(prefix), *FAST, "--data", str(folder))
    finally:
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        folder.rmdir()
    loader = [f for f in data["findings"] if f["category"] == "throughput: data"]
    assert loader and all(f["status"] != "FAIL" for f in loader), loader
    efficiency = next(f for f in loader if f["check"] == "loader efficiency")
    assert efficiency["status"] == "INFO" and "not judged" in efficiency["evidence"]
    assert not any("CPU-bound" in f["evidence"] for f in data["findings"])


def test_decode_image_shows_a_jpeg_folder_cpu_bound(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], jpegs: Jpegs
) -> None:
    jpegs(tmp_path / "jpegs")
    roomy = ("--budget", "20", *FAST[2:])  # a recommendation needs measured rows: room for them under load
    _code, data = smoke_json(
        capsys, str(prefix), *roomy, "--data", str(tmp_path / "jpegs"), "--decode", "image"
    )
    (dataset,) = data["datasets"]
    assert dataset["bound"] == "cpu" and 0 < dataset["cpu_ms"] <= dataset["latency_ms"] * 1.05
    decode = by_check(data)["decode"]
    assert "CPU-bound (decoding)" in decode["evidence"]
    (rec,) = data["recommendations"]
    assert f"num_workers={rec['workers']} delivers" in decode["evidence"]
    assert dataset["batch_bytes"] == 8 * 3 * 224 * 224 + 8 * 8 * 2  # decoded 224x224 RGB + index and size


def test_decode_skipped_with_one_line_when_there_is_nothing_to_decode(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], data_files: DataFiles
) -> None:
    data_files(tmp_path / "data", count=100)
    _code, data = smoke_json(
        capsys, str(prefix), *FAST, "--data", str(tmp_path / "data"), "--decode", "image"
    )
    decode = by_check(data)["decode"]
    assert decode["status"] == "INFO" and decode["evidence"].startswith("--decode skipped: no image files")
    assert data["datasets"][0]["length"] == 100  # the raw reads were still timed


def test_contention_and_a_pass_too_short_to_be_a_figure_are_named(
    tmp_path: Path, data_files: DataFiles
) -> None:
    """issue 27: cold random reads of 2.5 MB/s over 112 of 2,000 files under other I/O, 168-175 MB/s at a
    quiet moment, with no word about the contention. The real passes over real files, then the record as it
    reads under another process's reads and iowait."""
    data_files(tmp_path / "data", count=300)
    result = readpasses.measure(tmp_path / "data", budget_s=10)
    assert result.contention is not None and result.contention.seconds > 0
    rnd = result.pass_for("random", True)
    assert rnd is not None
    short = dataclasses.replace(
        result,
        files_total=2000,
        passes=tuple(dataclasses.replace(p, files=112) if p is rnd else p for p in result.passes),
        contention=readpasses.IoContention(seconds=2.0, others_read_bytes=400_000_000, iowait=0.35),
    )
    found = storage.read_speed(short)
    assert found.status == "WARN" and "these cold figures are lower bounds" in found.fix
    assert "the random cold pass read 112 of 2000 files in its time: too few to be a figure" in found.evidence
    assert (
        "measured under contention over 2.0 s: other processes read 381.5 MiB (200.0 MB/s), iowait 35%"
        in (found.evidence)
    )
    quiet = dataclasses.replace(result, contention=readpasses.IoContention(2.0, 0, 0.0))
    assert "contention" not in storage.read_speed(quiet).evidence
