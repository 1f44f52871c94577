"""`lock -o` over a file git tracks says so, with git lines that run as printed (issue 43: `export` and
`create -f` did, `lock -o` replaced a committed lock without a word); `create -f` and `lock -f` write the
same header for the same packages (they once differed by eight lines)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from tests.helpers import envguard


def _yml(folder: Path, channels: dict[str, Path], deps: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "environment.yml"
    channel = channels["forge"].resolve().as_uri()
    path.write_text(
        "\n".join(["name: scratch", "channels:", f"  - {channel}", "dependencies:", *deps]) + "\n"
    )
    return path


def _git(folder: Path, *argv: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv], cwd=folder, check=True)


def _header(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("#")]


def test_lock_o_over_a_tracked_lock_says_how_to_see_and_undo_it(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    yml = _yml(project, channels, ["  - python=3.11", "  - zlib"])
    lock = project / "conda-lock.yml"
    _git(project, "init", "-q")
    assert envguard("lock", "-f", str(yml), "-o", str(lock)) == 0
    _git(project, "add", "conda-lock.yml")
    _git(project, "commit", "-qm", "lock")
    committed = lock.read_text()
    capsys.readouterr()
    assert envguard("lock", "-f", str(yml), "-o", str(lock)) == 0  # the same lock again: nothing to say
    assert "which git tracks" not in capsys.readouterr().err
    _yml(project, channels, ["  - python=3.11", "  - zlib", "  - six"])
    assert envguard("lock", "-f", str(yml), "-o", str(lock)) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "which git tracks" in line]
    assert len(said) == 1, said
    show, undo = said[0].split("`")[1], said[0].split("`")[3]
    assert show.startswith("git -C ") and undo.endswith("checkout -- conda-lock.yml"), said
    shown = subprocess.run(shlex.split(show), cwd="/", capture_output=True, text=True, check=True)
    assert "+  - name: six" in shown.stdout or "+- name: six" in shown.stdout, shown.stdout
    subprocess.run(shlex.split(undo), check=True, cwd="/")  # runs as printed, from anywhere
    assert lock.read_text() == committed


def test_create_f_and_lock_f_write_the_same_header(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """create -f's lock says how to reproduce it; that `lock -f` line, run as printed, writes the same
    header (and the same packages)."""
    project = tmp_path / "project"
    yml = _yml(project, channels, ["  - python=3.11", "  - zlib"])
    assert envguard("create", "-f", str(yml), "-n", "headers") == 0
    created = (project / "conda-lock.yml").read_text()
    [line] = [h for h in _header(created) if h.startswith("#     envguard lock ")]
    argv = shlex.split(line.removeprefix("#     "))
    assert argv[:3] == ["envguard", "lock", "-f"] and "--no-cuda" in argv  # this machine has no GPU
    assert envguard(*argv[1:]) == 0
    locked = (project / "conda-lock.yml").read_text()
    assert _header(created) == _header(locked)
    names = [line for line in created.splitlines() if line.startswith("- name: ")]
    assert names == [line for line in locked.splitlines() if line.startswith("- name: ")] and names
    assert "which git tracks" not in capsys.readouterr().err
