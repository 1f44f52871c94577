"""sync never changes the environment envguard runs from (a pipx venv, or the environment envguard is
installed in) unless asked explicitly, and with no environment named or active it says so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, envguard


def test_sync_refuses_envguards_own_environment_first(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    own = Path(sys.prefix)
    before = sorted(os.listdir(own))
    capsys.readouterr()
    assert envguard("sync", str(own), "--lock", str(lock), "--yes") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"envguard: error: {own}: holds envguard's own environment")
    assert "ENVGUARD_ALLOW_SELF=1" in line
    assert sorted(os.listdir(own)) == before
    assert envguard("sync", str(own.parent), "--lock", str(lock), "--yes") == 2  # holding it, too
    assert "holds envguard's own environment" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [("check",), ("smoke",), ("doctor",), ("sync", "--yes"), ("snapshot",), ("lock", "-o", "out.yml")],
)
def test_no_environment_named_or_active_is_one_line_never_envguards_own(
    argv: tuple[str, ...], make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    prefix = make_prefix(["python=3.11"])
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(project / "conda-lock.yml")) == 0
    capsys.readouterr()
    assert envguard(*argv, cwd=project) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert "no environment given and none active" in line and "[tool.envguard]" in line
    assert sys.prefix not in captured.out + captured.err
    assert not (project / "out.yml").exists()


def test_create_force_refuses_to_replace_envguards_own_environment(
    channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    own = Path(sys.prefix)
    before = sorted(os.listdir(own))
    capsys.readouterr()
    code = envguard("create", "-c", str(channels["forge"]), "python=3.11", "-p", str(own), "--force")
    assert code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"{own}: holds envguard's own environment" in line and "ENVGUARD_ALLOW_SELF=1" in line
    assert sorted(os.listdir(own)) == before
