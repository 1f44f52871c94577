"""The index memo: the records verify and create --lock build from verified archives come from each archive's
index.json, remembered by its sha256 after the first read — the same records as reading every archive, never
another package's, and nothing remembered from an archive whose bytes are not the verified ones."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from envguard.engine import archives
from envguard.errors import BadInputError
from envguard.model import Package


def _packages(channel: Path) -> list[Package]:
    found = []
    for archive in sorted(channel.glob("*/*.conda")) + sorted(channel.glob("*/*.tar.bz2")):
        name, version, build = archive.name.rsplit(".tar.bz2", 1)[0].rsplit(".conda", 1)[0].rsplit("-", 2)
        sha = hashlib.sha256(archive.read_bytes()).hexdigest()
        found.append(Package("conda", name, version, build, url=archive.resolve().as_uri(), sha256=sha))
    return found


@pytest.fixture
def forge(channels: dict[str, Path], tmp_path: Path) -> Path:
    copy = tmp_path / "forge"  # archives below are overwritten: the session's channel must stay whole
    shutil.copytree(channels["forge"], copy)
    return copy


def _json(records: list[object]) -> list[str]:
    return [r.to_json() for r in records]  # type: ignore[attr-defined]


def test_remembered_records_equal_the_archives_own(forge: Path) -> None:
    fetched = archives.fetch(_packages(forge), None)
    assert len(fetched) > 10 and all(a.verified for a in fetched)
    memo = Path(archives.index_memo_folder())
    assert not memo.exists()
    read = archives.records(fetched)
    assert sorted(p.name for p in memo.iterdir()) == sorted(f"{a.actual}.json" for a in fetched)
    for archive in fetched:  # garbage of the same size: only the memo can serve the records now
        archive.path.write_bytes(b"x" * archive.path.stat().st_size)
    assert _json(archives.records(fetched)) == _json(read)
    assert all(oct(os.stat(p).st_mode & 0o777) == "0o600" for p in memo.iterdir())


def test_a_memo_entry_for_another_package_is_not_served(forge: Path) -> None:
    fetched = archives.fetch(_packages(forge), None)
    archives.records(fetched)
    first, second = fetched[0], fetched[1]
    memo = Path(archives.index_memo_folder())
    shutil.copyfile(memo / f"{second.actual}.json", memo / f"{first.actual}.json")
    (memo / f"{second.actual}.json").write_text("{ not json")
    records = archives.records([first, second])  # both read from their archives again
    assert [str(r.name.normalized) for r in records] == [first.package.name, second.package.name]
    assert records[0].sha256.hex() == first.actual


def test_an_archive_swapped_after_hashing_is_never_remembered(forge: Path) -> None:
    fetched = archives.fetch(_packages(forge), None)
    genuine, other = fetched[0], fetched[1]
    shutil.copyfile(other.path, genuine.path)  # after the hash: what rattler reads is not what was verified
    with pytest.raises(BadInputError, match="not the package the lock names"):  # another package's archive
        archives.records([genuine])
    assert not (Path(archives.index_memo_folder()) / f"{genuine.actual}.json").exists()
