"""Lock discovery (issue 11, S4): stops at the repository root, the home folder or a mount point, and never
trusts a lock or pyproject.toml owned by another user (git's safe.directory rule)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envguard.check.discovery import find_lock
from envguard.errors import BadInputError
from tests.helpers import envguard

LOCK = "version: 1\nmetadata: {}\npackage: []\n"


def _project(root: Path) -> Path:
    project = root / "proj" / "src"
    project.mkdir(parents=True)
    return project


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another user needs root")
def test_a_lock_owned_by_another_user_is_skipped_with_a_warning(tmp_path, capsys, isolated_home) -> None:
    shared = isolated_home / "shared"  # below HOME so that only the ownership rule applies
    project = _project(shared)
    planted = shared / "conda-lock.yml"
    planted.write_text(LOCK)
    os.chown(planted, 12345, 12345)
    with pytest.raises(BadInputError, match=r"no conda-lock\.yml"):
        find_lock(project)
    err = capsys.readouterr().err
    assert str(planted) in err and "another user" in err


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another user needs root")
def test_a_pyproject_owned_by_another_user_is_skipped(tmp_path, capsys, isolated_home) -> None:
    shared = isolated_home / "shared"
    project = _project(shared)
    (shared / "evil.yml").write_text(LOCK)
    pyproject = shared / "pyproject.toml"
    pyproject.write_text('[tool.envguard]\nlock = "evil.yml"\n')
    os.chown(pyproject, 12345, 12345)
    with pytest.raises(BadInputError, match=r"no conda-lock\.yml"):
        find_lock(project)
    assert str(pyproject) in capsys.readouterr().err


def test_discovery_stops_at_the_home_folder(tmp_path, isolated_home) -> None:
    above = isolated_home.parent / "conda-lock.yml"  # a lock above HOME (think /tmp or /home)
    above.write_text(LOCK)
    project = _project(isolated_home)
    with pytest.raises(BadInputError, match=r"no conda-lock\.yml"):
        find_lock(project)


def test_discovery_stops_at_the_repository_root(tmp_path, isolated_home) -> None:
    repo = isolated_home / "repo"
    project = _project(repo)
    (repo / ".git").mkdir()
    (isolated_home / "conda-lock.yml").write_text(LOCK)
    with pytest.raises(BadInputError):
        find_lock(project)


def test_own_lock_in_a_parent_is_found(tmp_path, isolated_home) -> None:
    project = _project(isolated_home)
    lock = isolated_home / "proj" / "conda-lock.yml"
    lock.write_text(LOCK)
    assert find_lock(project) == lock


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another user needs root")
def test_check_does_not_use_a_planted_lock(tmp_path, capsys, isolated_home) -> None:
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    shared = isolated_home / "shared"
    project = _project(shared)
    planted = shared / "conda-lock.yml"
    planted.write_text(LOCK)
    os.chown(planted, 12345, 12345)
    assert envguard("check", str(prefix), cwd=project) == 2
    err = capsys.readouterr().err
    assert "skipped, owned by another user" in err and "no conda-lock.yml" in err
