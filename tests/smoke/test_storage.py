"""`envguard smoke --data DIR` as a storage test: real files on disk, read cold (page cache dropped per file)
and warm; real JPEGs decoded with PIL in real DataLoader workers. Timings are bounded, never asserted.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from envguard.machine import coldread, disk
from envguard.smoke import storage, storage_verdicts
from tests.helpers import by_check, envguard, smoke_json

FAST = ("--budget", "10", "--workers", "0,2", "--batch-size", "8")
SHM = Path("/dev/shm")


def write_files(folder: Path, count: int = 300, size: int = 20_000, sync: bool = True) -> int:
    """`count` files of incompressible bytes in two class folders; the bytes written."""
    total = 0
    for i in range(count):
        sub = folder / f"class_{i % 2}"
        sub.mkdir(parents=True, exist_ok=True)
        data = os.urandom(size + i)
        (sub / f"{i:04}.bin").write_bytes(data)
        total += len(data)
    if sync:
        os.sync()
    return total


def write_jpegs(folder: Path, count: int = 120) -> None:
    image = pytest.importorskip("PIL.Image")
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        image.effect_noise((320, 240), 40 + i % 40).convert("RGB").save(folder / f"{i:04}.jpg", quality=90)
    os.sync()


def on_a_real_disk(path: Path) -> None:
    if disk.mount_of(path)[1] in disk.MEMORY_FS | disk.NETWORK_FS or not hasattr(os, "posix_fadvise"):
        pytest.skip(f"{path} is not on a local disk with posix_fadvise: nothing to read cold")


def test_cold_passes_read_every_file_from_the_disk(tmp_path: Path) -> None:
    on_a_real_disk(tmp_path)
    written = write_files(tmp_path / "data")
    result = storage.measure(tmp_path / "data", budget_s=25)
    assert result.method == "fadvise" and result.dropped
    assert (result.files_total, result.bytes_total) == (300, written)
    seq, rnd, warm = (
        result.get("sequential", True),
        result.get("random", True),
        result.get("sequential", False),
    )
    assert seq and rnd and warm
    for p in (seq, rnd, warm):  # each pass stops at its share of the time: a busy disk reads fewer files
        assert 0 < p.files <= rnd.files <= 300 and 20_000 * p.files <= p.bytes <= 20_299 * p.files
        assert 0 < p.mb_per_s < 100_000 and 0 < p.files_per_s < 10_000_000
        assert p.mb_per_s * 1e6 == pytest.approx(p.files_per_s * p.bytes / p.files, rel=1e-6)
    assert rnd.median_first_ms > warm.median_first_ms > 0
    assert warm.mb_per_s >= storage.NOT_COLD_RATIO * max(seq.mb_per_s, rnd.mb_per_s)


def test_files_written_moments_ago_still_read_cold(tmp_path: Path) -> None:
    """DONTNEED skips dirty pages: without a flush first, the first cold pass over a just-unpacked dataset
    read most files from the page cache (790-1064 MB/s against 300 MB/s for the second cold pass here)."""
    on_a_real_disk(tmp_path)
    write_files(tmp_path / "data", count=200, size=220_000, sync=False)
    result = storage.measure(tmp_path / "data", budget_s=25)
    first, second = result.get("random", True), result.get("sequential", True)
    assert first and second and result.dropped
    assert first.mb_per_s < 1.5 * second.mb_per_s, [
        (p.order, p.cold, round(p.mb_per_s)) for p in result.passes
    ]


def test_a_folder_in_memory_is_not_reported_as_cold(tmp_path: Path) -> None:
    if not SHM.is_dir() or disk.mount_of(SHM)[1] not in disk.MEMORY_FS:
        pytest.skip("no tmpfs at /dev/shm")
    folder = Path(os.path.realpath(SHM)) / f"envguard-storage-{os.getpid()}"
    try:
        write_files(folder, count=60)
        result = storage.measure(folder, budget_s=10)
    finally:
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        folder.rmdir()
    assert result.in_memory and not result.dropped
    assert "served from memory (tmpfs" in storage_verdicts.read_speed(result).evidence
    latency = storage_verdicts.disk_class(result)
    assert latency.status == "INFO" and "not measured cold" in latency.evidence
    assert "unmeasured cold rate" in storage_verdicts.page_cache(result).evidence


def test_page_cache_verdicts_against_the_ram(tmp_path: Path) -> None:
    on_a_real_disk(tmp_path)
    written = write_files(tmp_path / "data", count=40)
    result = storage.measure(tmp_path / "data", budget_s=10)
    fits = storage_verdicts.page_cache(result)
    assert (
        fits.status == "PASS"
        and "fits in the page cache" in fits.evidence
        and "later epochs at warm" in fits.evidence
    )
    tight = storage_verdicts.page_cache(result, available=int(written * 1.5))
    assert tight.status == "INFO" and "only just" in tight.evidence
    big = storage_verdicts.page_cache(result, available=written // 2)
    assert big.status == "WARN" and "every epoch reads from the disk at random cold" in big.evidence
    assert "shards" in big.fix


def test_disk_classified_from_measured_latency(tmp_path: Path) -> None:
    on_a_real_disk(tmp_path)
    write_files(tmp_path / "data", count=40)
    result = storage.measure(tmp_path / "data", budget_s=10)
    measured = storage_verdicts.disk_class(result)
    assert measured.status == "PASS" and f"{result.cold_latency_ms():.3f} ms" in measured.evidence

    def at(ms: float) -> str:
        slow = tuple(dataclasses.replace(p, median_first_ms=ms) if p.cold else p for p in result.passes)
        finding = storage_verdicts.disk_class(dataclasses.replace(result, passes=slow))
        return f"{finding.status} {finding.evidence}"

    assert at(0.1).startswith("PASS") and "NVMe-like" in at(0.1)
    assert at(0.8).startswith("PASS") and "SSD-like" in at(0.8)
    assert at(9.0).startswith("WARN") and "HDD-like or remote" in at(9.0)


@pytest.mark.slow
def test_data_reports_cold_and_warm_reads(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    on_a_real_disk(tmp_path)
    write_files(tmp_path / "data")
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


@pytest.mark.slow
def test_warm_small_files_are_not_called_cpu_bound(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Files served from memory cost less per sample than the DataLoader itself: no efficiency FAIL and no
    'CPU-bound' (the old sweep said CPU-bound at efficiency 0.06-0.19 here)."""
    if not SHM.is_dir() or disk.mount_of(SHM)[1] not in disk.MEMORY_FS:
        pytest.skip("no tmpfs at /dev/shm")
    folder = Path(os.path.realpath(SHM)) / f"envguard-warm-{os.getpid()}"
    try:
        write_files(folder, count=300)
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


@pytest.mark.slow
def test_decode_image_shows_a_jpeg_folder_cpu_bound(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_jpegs(tmp_path / "jpegs")
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


@pytest.mark.slow
def test_decode_skipped_with_one_line_when_there_is_nothing_to_decode(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_files(tmp_path / "data", count=100)
    _code, data = smoke_json(
        capsys, str(prefix), *FAST, "--data", str(tmp_path / "data"), "--decode", "image"
    )
    decode = by_check(data)["decode"]
    assert decode["status"] == "INFO" and decode["evidence"].startswith("--decode skipped: no image files")
    assert data["datasets"][0]["length"] == 100  # the raw reads were still timed


def test_bad_data_input_is_one_line(prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert envguard("smoke", str(prefix), *FAST, "--data", str(empty)) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err
        == f"envguard: error: --data {empty}: no files under this folder to read; point --data at your data"
    )
    assert envguard("smoke", str(prefix), *FAST, "--decode", "image") == 2
    assert "--decode image decodes the files of --data DIR" in capsys.readouterr().err


def test_o_direct_where_fadvise_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS has no posix_fadvise: the cold read opens the file with O_DIRECT, a real read past the page
    cache into an aligned buffer, the short last block included."""
    on_a_real_disk(tmp_path)
    if not getattr(os, "O_DIRECT", 0):
        pytest.skip("no O_DIRECT on this platform")
    data = os.urandom(3 * 1024 * 1024 + 123)  # not a multiple of the block size: the last read is short
    (tmp_path / "a.bin").write_bytes(data)
    monkeypatch.delattr(os, "posix_fadvise")
    read = coldread.read_file(tmp_path / "a.bin", cold=True)
    assert read is not None and read.cold and read.bytes == len(data)
