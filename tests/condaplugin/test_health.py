"""What the conda plugin reports, without conda: which lock an environment follows, the lock check's states
and wording, the one-line warning, and torch's family, on real prefixes from the fixture channels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.condaplugin import render
from envguard.condaplugin.health import followed_lock, lock_health, torch_health
from envguard.prefix.lockref import RECORD, remember
from tests.helpers import MakePrefix, envguard, install

OK, BAD = "OK", "BAD"


def _lock(prefix: Path, lock: Path) -> Path:
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    return lock


def test_the_recorded_lock_wins_and_a_project_lock_is_the_active_environments_only(
    make_prefix: MakePrefix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = make_prefix(["zlib"])
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "conda-lock.yml").write_text("version: 1\n")
    assert followed_lock(prefix, project) is None  # not the active environment: the project's lock is not its
    monkeypatch.setenv("CONDA_PREFIX", str(prefix))
    followed = followed_lock(prefix, project)
    assert followed is not None and (followed.lock, followed.how) == (project / "conda-lock.yml", "project")
    recorded = _lock(prefix, tmp_path / "env.lock.yml")  # `envguard lock PREFIX -o FILE` records FILE
    followed = followed_lock(prefix, project)
    assert followed is not None and (followed.lock, followed.how) == (recorded, "recorded")
    assert not followed.edited
    recorded.write_text(recorded.read_text() + "# edited\n")
    followed = followed_lock(prefix, project)
    assert followed is not None and followed.edited
    assert "recorded by envguard, edited since" in render.lock_lines(lock_health(prefix, project), OK, BAD)[0]


def _drifted(channels: dict[str, Path], extra: Path, cache: Path, tmp_path: Path) -> Path:
    """zlib and fill000: what a lock of zlib alone becomes after `conda install fill000`."""
    return install(tmp_path / "drifted", ["zlib", "fill000"], [channels["forge"], extra], cache=cache)


def test_clean_then_drift_named_in_the_report_and_the_one_line(
    make_prefix: MakePrefix, channels: dict[str, Path], extra_channel: Path, pkgs_cache: Path, tmp_path: Path
) -> None:
    locked = make_prefix(["zlib"], name="locked")
    lock = _lock(locked, tmp_path / "env.lock.yml")
    health = lock_health(locked, tmp_path)
    assert health.state == "clean"
    assert render.lock_lines(health, OK, BAD) == [
        f"OK envguard: {locked} matches its lock {lock} (recorded by envguard)"
    ]
    assert render.left_its_lock(health) is None

    drifted = _drifted(channels, extra_channel, pkgs_cache, tmp_path)
    assert remember(drifted, lock)
    health = lock_health(drifted, tmp_path)
    assert health.state == "drift"
    lines = render.lock_lines(health, OK, BAD)
    assert (
        lines[0].startswith(f"BAD envguard: {drifted} differs from its lock {lock}")
        and "1 difference" in lines[0]
    )
    assert "fill000 1.0.0" in lines[1] and "installed, not in the lock" in lines[1]
    line = render.left_its_lock(health)
    assert line is not None and "\n" not in line
    assert line.startswith(f"envguard: {drifted} left its lock: +fill000; '")
    assert f"'envguard lock {drifted} -o {lock}' accepts it" in line


def test_the_accept_command_runs_as_printed(
    make_prefix: MakePrefix, channels: dict[str, Path], extra_channel: Path, pkgs_cache: Path, tmp_path: Path
) -> None:
    lock = _lock(make_prefix(["zlib"], name="locked"), tmp_path / "env.lock.yml")
    drifted = _drifted(channels, extra_channel, pkgs_cache, tmp_path)
    remember(drifted, lock)
    line = render.left_its_lock(lock_health(drifted, tmp_path))
    assert line is not None
    accept = line.rsplit("'", 2)[-2]
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    done = subprocess.run(
        accept, shell=True, capture_output=True, text=True, env={**os.environ, "PATH": path}
    )
    assert done.returncode == 0, done.stderr
    assert lock_health(drifted, tmp_path).state == "clean"


def test_no_lock_says_so_and_passes(make_prefix: MakePrefix, tmp_path: Path) -> None:
    prefix = make_prefix(["zlib"])
    health = lock_health(prefix, tmp_path)
    assert health.state == "no-lock" and render.left_its_lock(health) is None
    (line,) = render.lock_lines(health, OK, BAD)
    assert line.startswith(f"OK envguard: no lock known for {prefix}") and "nothing to check" in line


@pytest.mark.parametrize("damage", ["garbage", "missing", "pyproject"])
def test_a_lock_it_cannot_read_is_one_line(
    make_prefix: MakePrefix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    prefix = make_prefix(["zlib"])
    lock = _lock(prefix, tmp_path / "env.lock.yml")
    if damage == "garbage":
        lock.write_text("garbage: [\n")
    elif damage == "missing":
        lock.unlink()
    else:  # no record: the active environment's project lock, from a pyproject.toml that cannot be read
        (prefix / RECORD).unlink()
        monkeypatch.setenv("CONDA_PREFIX", str(prefix))
        (tmp_path / ".git").mkdir()
        (tmp_path / "pyproject.toml").write_text("[tool.envguard\nlock = 1\n")
    health = lock_health(prefix, tmp_path)
    assert health.state == "unreadable" and health.problem and "\n" not in health.problem
    (line,) = render.lock_lines(health, OK, BAD)
    assert line.startswith(f"BAD envguard: cannot check {prefix} against its lock: ")
    warning = render.left_its_lock(health)
    assert warning is not None and "\n" not in warning


def test_torch_and_its_family_from_two_builds_are_named(
    channels: dict[str, Path], extra_channel: Path, pkgs_cache: Path, tmp_path: Path
) -> None:
    prefix = install(
        tmp_path / "torch",
        ["pytorch=2.1.0=*cpu*", "torchaudio=2.1.0", "torchvision=0.16.0"],
        [channels["forge"], channels["pytorch"], extra_channel],
        cache=pkgs_cache,
    )
    health = torch_health(prefix)
    assert [m.name for m in health.members] == ["pytorch", "torchvision", "torchaudio"]
    lines = render.torch_lines(health, OK, BAD)
    assert (
        lines[0]
        == "BAD envguard: pytorch 2.1.0, torchvision 0.16.0, torchaudio 2.1.0 do not belong together:"
    )
    assert lines[1] == "    torchvision 0.16.0 is a CUDA 12.1 build, pytorch 2.1.0 a CPU build"
    assert len(lines) == 3  # torchaudio is pytorch's release and build: not named

    alone = install(
        tmp_path / "alone",
        ["pytorch=2.1.0=*cpu*"],
        [channels["forge"], channels["pytorch"]],
        cache=pkgs_cache,
    )
    assert render.torch_lines(torch_health(alone), OK, BAD) == [
        "OK envguard: pytorch 2.1.0 (cpu); no torchvision or torchaudio beside it"
    ]
    none = install(tmp_path / "none", ["zlib"], [channels["forge"]], cache=pkgs_cache)
    assert render.torch_lines(torch_health(none), OK, BAD) == [
        f"OK envguard: no torch in {none}; nothing to check"
    ]
