"""readpasses.py, `envguard smoke --data DIR`'s storage test on the host: real files on disk read cold (the
page cache dropped per file) and warm. Timings are bounded, never asserted."""

from __future__ import annotations

import ctypes
import mmap
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from envguard.machine import coldread
from envguard.smoke import readpasses
from tests.helpers import envguard

FAST = ("--budget", "10", "--workers", "0,2", "--batch-size", "8")
DataFiles = Callable[..., int]
Jpegs = Callable[..., None]
RealDisk = Callable[[Path], None]


def test_cold_passes_read_every_file_from_the_disk(
    tmp_path: Path, data_files: DataFiles, real_disk: RealDisk
) -> None:
    real_disk(tmp_path)
    written = data_files(tmp_path / "data")
    result = readpasses.measure(tmp_path / "data", budget_s=25)
    assert result.method == "fadvise" and result.dropped
    assert (result.files_total, result.bytes_total) == (300, written)
    seq, rnd, warm = (
        result.pass_for("sequential", True),
        result.pass_for("random", True),
        result.pass_for("sequential", False),
    )
    assert seq and rnd and warm
    for p in (seq, rnd, warm):  # each pass stops at its share of the time: a busy disk reads fewer files
        assert 0 < p.files <= rnd.files <= 300 and 20_000 * p.files <= p.bytes <= 20_299 * p.files
        assert 0 < p.mb_per_s < 100_000 and 0 < p.files_per_s < 10_000_000
        assert p.mb_per_s * 1e6 == pytest.approx(p.files_per_s * p.bytes / p.files, rel=1e-6)
    assert rnd.median_first_ms > warm.median_first_ms > 0
    assert warm.mb_per_s >= readpasses.NOT_COLD_RATIO * max(seq.mb_per_s, rnd.mb_per_s)


def test_files_written_moments_ago_still_read_cold(
    tmp_path: Path, data_files: DataFiles, real_disk: RealDisk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DONTNEED skips dirty pages: without a flush first, the first cold pass over a just-unpacked dataset
    read most files from the page cache (790-1064 MB/s against 300 MB/s for the second cold pass, measured
    once). The page cache itself says so (mincore): as each cold read begins, none of its file's pages is
    cached, though every file was written moments ago and sat there dirty."""
    real_disk(tmp_path)
    data_files(tmp_path / "data", count=40, size=220_000, sync=False)
    files = coldread.data_files(tmp_path / "data", 1000)
    assert all(cached_pages(path) for path in files)  # what a just-unpacked dataset looks like
    prepare, found = coldread._prepare, []

    def prepared_then_looked_at(path: Path) -> tuple[bool, bool] | None:
        made = prepare(path)
        found.append((path.name, cached_pages(path)))
        return made

    monkeypatch.setattr(coldread, "_prepare", prepared_then_looked_at)
    result = readpasses.measure(tmp_path / "data", budget_s=25)
    assert (
        result.method == "fadvise" and result.pass_for("random", True) and result.pass_for("sequential", True)
    )
    assert found  # each pass stops at its share of the time: a busy disk reads fewer files, never none
    assert all(cached == 0 for _, cached in found), [hit for hit in found if hit[1]]


def cached_pages(path: Path) -> int:
    """How many of `path`'s pages the page cache holds (mincore over a mapping of it that touches none)."""
    size = path.stat().st_size
    libc = ctypes.CDLL(None, use_errno=True)
    page = mmap.PAGESIZE
    vector = (ctypes.c_ubyte * ((size + page - 1) // page))()
    with path.open("rb") as handle:
        mapped = mmap.mmap(
            handle.fileno(), size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE
        )
    try:
        view = (ctypes.c_char * size).from_buffer(mapped)
        try:
            if libc.mincore(ctypes.c_void_p(ctypes.addressof(view)), ctypes.c_size_t(size), vector) != 0:
                raise OSError(ctypes.get_errno(), f"mincore {path}")
        finally:
            del view
    finally:
        mapped.close()
    return sum(byte & 1 for byte in vector)


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


def test_o_direct_where_fadvise_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_disk: RealDisk
) -> None:
    """macOS has no posix_fadvise: the cold read opens the file with O_DIRECT, a real read past the page
    cache into an aligned buffer, the short last block included."""
    real_disk(tmp_path)
    if not getattr(os, "O_DIRECT", 0):
        pytest.skip("no O_DIRECT on this platform")
    data = os.urandom(3 * 1024 * 1024 + 123)  # not a multiple of the block size: the last read is short
    (tmp_path / "a.bin").write_bytes(data)
    monkeypatch.delattr(os, "posix_fadvise")
    read = coldread.read_file(tmp_path / "a.bin", cold=True)
    assert read is not None and read.cold and read.bytes == len(data)
