"""verify deletes its temporary prefix off the user's clock: after the report, the prefix is renamed into the
trash folder and a detached rm deletes it (nothing left once it finishes, no zombie of ours); a deleter an
earlier run lost (over an hour old) is finished by the next; where the rename cannot be done, the folder is
deleted at once."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from envguard.verify import trash as verify_run
from tests.helpers import envguard, settled


def _gone(paths: list[Path], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while any(p.exists() for p in paths) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(p.exists() for p in paths)


def _children() -> list[str]:
    """This process's children (a zombie of ours would be listed here)."""
    found = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        try:
            with open(f"/proc/{os.getpid()}/task/{task}/children", encoding="ascii") as handle:
                found += handle.read().split()
        except OSError:
            continue
    return found


def _tree(folder: Path) -> Path:
    (folder / "env" / "lib").mkdir(parents=True)
    for number in range(200):
        (folder / "env" / "lib" / f"file{number}").write_text("x" * 100)
    return folder


def test_the_folder_is_renamed_then_deleted_in_the_background(scratch: Path) -> None:
    before = _children()
    folder = _tree(scratch / "envguard-verify-abc")
    verify_run.discard(folder)
    assert not folder.exists()  # at once: renamed away
    assert _gone([scratch / verify_run.TRASH])  # its content deleted, then the trash folder itself
    assert _children() == before


def test_a_stale_leftover_in_the_trash_is_deleted_too(scratch: Path) -> None:
    trash = scratch / verify_run.TRASH
    old, recent = _tree(trash / "envguard-verify-old"), _tree(trash / "envguard-verify-recent")
    hours_ago = time.time() - 2 * verify_run.STALE_S
    os.utime(old, (hours_ago, hours_ago))
    verify_run.discard(_tree(scratch / "envguard-verify-new"))
    assert _gone([old, trash / "envguard-verify-new"])
    assert recent.exists() and trash.exists()  # a younger one may still have its own deleter at work


def test_without_a_rename_the_folder_is_deleted_at_once(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree(scratch / "envguard-verify-xyz")

    def cross_device(self: Path, target: object) -> Path:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(Path, "rename", cross_device)
    verify_run.discard(folder)
    assert not folder.exists() and not (scratch / verify_run.TRASH / folder.name).exists()


def test_verify_leaves_no_temporary_prefix(channels: dict[str, Path], scratch: Path, tmp_path: Path) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(f"channels:\n  - {channels['forge'].resolve().as_uri()}\ndependencies:\n  - zlib\n")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock)) == 0
    assert envguard("verify", "--lock", str(lock)) == 0
    assert settled(scratch) == []  # the prefix, and the trash folder once empty
