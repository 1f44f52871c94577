"""The archive digest memo: an unchanged archive is not read again, and any write to it — in place with the
size and mtime put back, a replacement, another algorithm — is hashed again, so a poisoned archive in the
package cache still fails verify after a verify that remembered its digest."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from envguard.cache.digests import DigestMemo, _memo_path
from tests.helpers import envguard, files_opened, zlib_lock


@pytest.fixture
def aged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled at once (the real 2 s rule has its own test)."""
    monkeypatch.setattr(DigestMemo, "FRESH_NS", -(10**12))


def _sha(path: Path, algorithm: str = "sha256") -> str:
    return hashlib.new(algorithm, path.read_bytes()).hexdigest()


def _memo_digest(path: Path, algorithm: str = "sha256") -> str:
    """One process's view: a new memo (loaded from the cache), one digest, saved."""
    memo = DigestMemo()
    value = memo.digest(path, algorithm)
    memo.save()
    return value


def test_an_unchanged_archive_is_not_read_again(tmp_path: Path, aged: None) -> None:
    archive = tmp_path / "zlib-1.3.1-h0_0.conda"
    archive.write_bytes(b"an archive" * 1000)
    expected = _sha(archive)
    assert _memo_digest(archive) == expected
    with files_opened() as opened:
        assert _memo_digest(archive) == expected
    assert str(archive) not in opened  # served by the memo: the archive was not opened
    assert _memo_digest(archive, "md5") == _sha(archive, "md5")  # another algorithm: hashed, not mixed up


@pytest.mark.parametrize("how", ["in place, size and mtime put back", "replaced", "appended"])
def test_any_write_to_the_archive_is_hashed_again(tmp_path: Path, aged: None, how: str) -> None:
    archive = tmp_path / "six-1.16.0-py_0.conda"
    archive.write_bytes(b"genuine" * 100)
    assert _memo_digest(archive) == _sha(archive)
    before = archive.stat()
    if how == "replaced":
        other = tmp_path / "other"
        other.write_bytes(b"poisoned" * 100)
        os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
        other.replace(archive)
    elif how == "appended":
        with open(archive, "ab") as handle:
            handle.write(b"x")
    else:
        with open(archive, "r+b") as handle:
            handle.write(b"POISON!")
        os.utime(archive, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert archive.stat().st_size == before.st_size and archive.stat().st_mtime_ns == before.st_mtime_ns
    assert _memo_digest(archive) == _sha(archive)


def test_fresh_files_and_damaged_memos_are_never_trusted(tmp_path: Path) -> None:
    archive = tmp_path / "zlib-1.3.1-h0_0.tar.bz2"
    archive.write_bytes(b"just written")
    assert _memo_digest(archive) == _sha(archive)
    assert not os.path.exists(_memo_path(str(tmp_path.resolve())))  # younger than 2 s: not remembered
    memo_file = Path(_memo_path(str(tmp_path.resolve())))
    memo_file.parent.mkdir(parents=True, exist_ok=True)
    lie = {"header": [1, str(tmp_path.resolve())], "files": {archive.name: [[1], "sha256", "00" * 32]}}
    for text in ("not json", json.dumps(lie), json.dumps({"header": 5})):
        memo_file.write_text(text)
        assert _memo_digest(archive) == _sha(archive)


def test_a_poisoned_archive_fails_verify_after_its_digest_was_remembered(
    channels: dict[str, Path], tmp_path: Path, aged: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # a private copy: the package cache hard-links its archives, and one is written in place below (the
    # session's channel must stay whole)
    forge = tmp_path / "forge"
    shutil.copytree(channels["forge"], forge)
    lock = zlib_lock(tmp_path / "proj", forge)
    pkgs = tmp_path / "pkgs"
    argv = ["verify", "--lock", str(lock), "--pkgs-dir", str(pkgs), "--json"]
    assert envguard(*argv) == 0 and envguard(*argv) == 0  # the second run is served by the memo
    archive = next(pkgs.glob("zlib-*.conda"))
    before = archive.stat()
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    with open(archive, "r+b") as handle:  # in place: same inode, same size, the mtime put back
        handle.write(bytes(data))
    os.utime(archive, ns=(before.st_atime_ns, before.st_mtime_ns))
    capsys.readouterr()
    assert envguard(*argv) == 1
    result = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in result["mismatches"]] == ["zlib"]


def test_a_full_memo_keeps_only_what_its_run_used(
    tmp_path: Path, aged: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(DigestMemo, "MAX_ENTRIES", 2)
    archives = [tmp_path / f"pkg{i}-1.0-0.conda" for i in range(4)]
    for number, archive in enumerate(archives):
        archive.write_bytes(b"archive %d" % number)
    memo = DigestMemo()
    for archive in archives[:2]:
        memo.digest(archive)
    memo.save()
    memo = DigestMemo()  # a later run: two more archives, the memo now over its bound
    for archive in archives[2:]:
        memo.digest(archive)
    memo.save()
    kept = json.loads(Path(_memo_path(str(tmp_path))).read_text())["files"]
    assert sorted(kept) == [a.name for a in archives[2:]]
    assert all(_memo_digest(a) == _sha(a) for a in archives)


def test_fetch_serves_remembered_archives_and_hashes_the_rest_in_order(tmp_path: Path, aged: None) -> None:
    from envguard.engine import archives
    from envguard.model import Package

    folder = tmp_path / "channel" / "linux-64"
    folder.mkdir(parents=True)
    packages = []
    for number in range(12):
        archive = folder / f"pkg{number}-1.0-h0_0.conda"
        archive.write_bytes(b"archive %d" % number * 50)
        packages.append(
            Package("conda", f"pkg{number}", "1.0", "h0_0", url=archive.as_uri(), sha256=_sha(archive))
        )
    first = archives.fetch(packages[::2], None)  # every other archive is remembered
    assert [a.package for a in first] == packages[::2] and all(a.verified for a in first)
    poisoned = folder / "pkg5-1.0-h0_0.conda"
    poisoned.write_bytes(b"poisoned")
    with files_opened() as opened:
        found = archives.fetch(packages, None)
    assert [a.package for a in found] == packages  # the lock's order, remembered or not
    assert [a.package.name for a in found if not a.verified] == ["pkg5"]
    read = {Path(p).name for p in opened if p.endswith(".conda")}
    assert read == {p.filename for p in packages[1::2]}  # only those the memo did not know were read


@pytest.mark.parametrize("gone", ["deleted", "a folder"])
def test_a_remembered_archive_that_is_gone_is_reported_by_name(tmp_path: Path, aged: None, gone: str) -> None:
    """The memo's first pass takes a file:// archive without checking it exists (its own stat does); one
    deleted, or replaced by a folder, after its digest was remembered is still the one-line error naming the
    package, not a miss served or a traceback."""
    from envguard.engine import archives
    from envguard.errors import OperationalError
    from envguard.model import Package

    archive = tmp_path / "channel" / "linux-64" / "zlib-1.3.1-h0_0.conda"
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"an archive" * 100)
    package = Package("conda", "zlib", "1.3.1", "h0_0", url=archive.as_uri(), sha256=_sha(archive))
    assert [a.verified for a in archives.fetch([package], None)] == [True]  # remembered
    archive.unlink()
    if gone == "a folder":
        archive.mkdir()
    with pytest.raises(OperationalError, match=r"zlib 1\.3\.1 .*does not exist; the local channel moved"):
        archives.fetch([package], None)
