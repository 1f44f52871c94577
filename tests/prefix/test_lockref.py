"""The lock an environment follows, recorded inside it: read back as written, an edited lock told apart, and
an unwritable environment or a damaged record never an error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envguard.prefix.lockref import RECORD, recall, remember


def test_a_recorded_lock_is_recalled_and_an_edit_is_seen(tmp_path: Path) -> None:
    prefix, lock = tmp_path / "env", tmp_path / "proj" / "conda-lock.yml"
    prefix.mkdir()
    lock.parent.mkdir()
    lock.write_text("version: 1\n")
    assert recall(prefix) is None
    assert remember(prefix, lock)
    ref = recall(prefix)
    assert ref is not None and ref.lock == lock.resolve() and ref.current()
    lock.write_text("version: 1\n# edited\n")
    assert not recall(prefix).current()  # type: ignore[union-attr]
    lock.unlink()
    assert not recall(prefix).current()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "content",
    # the last: 200k-deep nesting (issue 42: a RecursionError out of conda's post-command hook)
    ["not json", '{"format": 99}', '{"format": 1, "lock": 3}', "[]", "[" * 200_000 + "]" * 200_000],
)
def test_a_damaged_record_is_no_record(tmp_path: Path, content: str) -> None:
    (tmp_path / RECORD).parent.mkdir(parents=True)
    (tmp_path / RECORD).write_text(content)
    assert recall(tmp_path) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_environment_keeps_no_record(tmp_path: Path) -> None:
    lock = tmp_path / "conda-lock.yml"
    lock.write_text("version: 1\n")
    prefix = tmp_path / "env"
    prefix.mkdir(mode=0o555)
    assert remember(prefix, lock) is False and recall(prefix) is None


def test_a_missing_lock_is_not_recorded(tmp_path: Path) -> None:
    assert remember(tmp_path, tmp_path / "missing.yml") is False and recall(tmp_path) is None


def test_an_unchanged_lock_is_current_without_reading_it(tmp_path: Path) -> None:
    """Issue 42: the conda plugin's post-command hook asks whether the recorded lock is still the one
    recorded after every `conda install`; a lock untouched since (its size, times and inode) is answered from
    its stat, so the cost does not grow with the lock (a 400 MB lock was read and hashed each time)."""
    from tests.helpers import files_opened

    prefix, lock = tmp_path / "env", tmp_path / "conda-lock.yml"
    prefix.mkdir()
    lock.write_text("version: 1\n" + "# padding\n" * 1000)
    assert remember(prefix, lock)
    ref = recall(prefix)
    assert ref is not None
    with files_opened() as opened:
        assert ref.current()
    assert str(lock.resolve()) not in opened and str(lock) not in opened, opened
    lock.write_text("version: 2\n" + "# padding\n" * 1000)  # same size, other bytes
    assert not recall(prefix).current()  # type: ignore[union-attr]
