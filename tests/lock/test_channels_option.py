"""`lock -f environment.yml -c CHANNEL`: the option the "no channels" message suggests exists, works as
conda's `-c` (before the file's own channels), and the lock it writes is fresh, reproducible and re-locked as
printed."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.formats.condalock import read as condalock
from tests.helpers import MakePrefix, envguard


def _shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True)


def test_no_channels_suggests_c_and_c_works(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    envyml = tmp_path / "environment.yml"
    envyml.write_text("dependencies:\n  - python=3.11\n  - zlib\n")
    capsys.readouterr()
    assert envguard("lock", "-f", "environment.yml", "--no-cuda", cwd=tmp_path) == 2
    err = capsys.readouterr().err
    assert "pass -c CHANNEL" in err and len(err.splitlines()) == 1
    forge = channels["forge"].resolve().as_uri()
    assert envguard("lock", "-f", "environment.yml", "--no-cuda", "-c", forge, cwd=tmp_path) == 0
    lock = tmp_path / "conda-lock.yml"
    data = condalock.read_lock(lock)
    assert data.channels == (forge,)
    assert {p.name for p in next(iter(data.envs.values())).conda_packages()} >= {"python", "zlib"}
    capsys.readouterr()
    assert envguard("check", "--lock-fresh", cwd=tmp_path) == 0, capsys.readouterr().out
    # the file gains a spec: stale, and the printed fix (the lock's own Reproduce line, -c included) runs
    envyml.write_text("dependencies:\n  - python=3.11\n  - zlib\n  - six\n")
    capsys.readouterr()
    assert envguard("check", "--lock-fresh", cwd=tmp_path) == 1
    out = capsys.readouterr().out
    fix = out.split("How to fix:\n", 1)[1].strip().splitlines()
    assert len(fix) == 1 and f"-c {shlex.quote(forge)}" in fix[0], out
    done = _shell(fix[0], tmp_path / "..")
    assert done.returncode == 0, done.stderr
    capsys.readouterr()
    assert envguard("check", "--lock-fresh", cwd=tmp_path) == 0, capsys.readouterr().out


def test_c_goes_before_the_files_channels(channels: dict[str, Path], tmp_path: Path) -> None:
    forge, alt = (channels[n].resolve().as_uri() for n in ("forge", "alt"))
    (tmp_path / "environment.yml").write_text(f"channels: [{forge}]\ndependencies: [python=3.11]\n")
    assert envguard("lock", "-f", "environment.yml", "--no-cuda", "-c", alt, cwd=tmp_path) == 0
    assert condalock.read_lock(tmp_path / "conda-lock.yml").channels == (alt, forge)
    assert envguard("check", "--lock-fresh", cwd=tmp_path) == 0


def test_c_with_a_live_environment_is_a_usage_error(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(["python=3.11"])
    capsys.readouterr()
    assert envguard("lock", str(prefix), "-c", "conda-forge", "-o", str(tmp_path / "x.yml")) == 2
    assert "-c/--channel applies to -f environment.yml" in capsys.readouterr().err
