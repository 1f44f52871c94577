"""Atomic writes: all or nothing, permissions kept, no temp file left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envguard.atomic import write_text
from envguard.errors import OperationalError


def test_replaces_whole_file_and_keeps_permissions(tmp_path: Path) -> None:
    tmp_path = tmp_path / "project"
    tmp_path.mkdir()
    target = tmp_path / "conda-lock.yml"
    target.write_text("old\n")
    target.chmod(0o640)
    write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conda-lock.yml"]


def test_new_file_gets_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = write_text(tmp_path / "sub" / "new.yml", "x\n", durable=False)
    finally:
        os.umask(old)
    assert path.read_text() == "x\n" and path.stat().st_mode & 0o777 == 0o644


def test_unwritable_folder_is_operational_error_and_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "lock.yml").write_text("keep\n")
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running with permission bypass (root): the folder stays writable")
        with pytest.raises(OperationalError, match=r"cannot write .*lock\.yml"):
            write_text(folder / "lock.yml", "new\n")
    finally:
        folder.chmod(0o700)
    assert (folder / "lock.yml").read_text() == "keep\n"
    assert sorted(p.name for p in folder.iterdir()) == ["lock.yml"]


def test_target_is_a_folder(tmp_path: Path) -> None:
    tmp_path = tmp_path / "project"
    (tmp_path / "dir").mkdir(parents=True)
    with pytest.raises(OperationalError, match="nothing was changed"):
        write_text(tmp_path / "dir", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir"]
