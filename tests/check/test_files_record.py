"""`check --files` checks pip packages too, against their dist-info RECORD (sha256 and size): in a venv (no
conda-meta) and in a conda prefix, where conda's records do not list pip's files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, check_out, envguard, make_venv, pip_install

WHEEL = "tinyproj-1.0.0-py3-none-any.whl"


def _alter_and_remove(site: Path) -> None:
    module = site / "tinyproj" / "__init__.py"
    text = module.read_bytes()
    module.write_bytes(bytes([text[0] ^ 1]) + text[1:])  # same size, other content
    (site / "tinyproj-1.0.0.dist-info" / "METADATA").unlink()


def test_venv_files_are_checked_against_record(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    venv = make_venv(tmp_path / ".venv", sys.executable, str(channels["wheels"] / WHEEL))
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "-o", str(lock)) == 0
    assert check_out(venv, lock, capsys, "--files") == (0, f"OK: {venv} matches {lock}\n")
    _alter_and_remove(next((venv / "lib").glob("python3.*/site-packages")))
    code, out = check_out(venv, lock, capsys, "--files")
    assert code == 1, out
    site = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
    assert f"{site}/tinyproj/__init__.py (tinyproj 1.0.0 (pip)): altered (sha256 now" in out, out
    assert f"{site}/tinyproj-1.0.0.dist-info/METADATA (tinyproj 1.0.0 (pip)): missing" in out, out
    fix = out.split("\nHow to fix:\n", 1)[1].splitlines()
    assert fix == [f"  envguard sync {venv} --lock {lock} --files --yes"], (
        out
    )  # no pip in this venv: one line
    # the lock does not record the wheel's path (no --include-local), so sync reinstalls the installed copy
    # from where pip recorded it came from, proved by the hash pip recorded
    assert envguard(*fix[0].split()[1:]) == 0, capsys.readouterr()
    assert check_out(venv, lock, capsys, "--files") == (0, f"OK: {venv} matches {lock}\n")


def test_conda_prefix_pip_files_are_checked_against_record(
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix = make_prefix(["python=3.11", "six"])
    pip_install(prefix, str(channels["wheels"] / WHEEL))
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    assert check_out(prefix, lock, capsys, "--files")[0] == 0
    _alter_and_remove(next((prefix / "lib").glob("python3.*/site-packages")))
    code, out = check_out(prefix, lock, capsys, "--files")
    assert code == 1 and "tinyproj/__init__.py (tinyproj 1.0.0 (pip)): altered" in out, out
    assert "six" not in out.split("How to fix:")[0], out  # conda's files are intact and not blamed
