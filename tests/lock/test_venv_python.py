"""A venv lock made without the probe still records which Python the venv runs (pyvenv.cfg): the same pins on
another Python minor are drift, not OK."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest
import yaml

from envguard.formats.condalock import read as condalock
from tests.helpers import check_out, envguard, make_venv, other_python


def test_no_probe_venv_lock_records_python_and_another_minor_is_drift(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    other = other_python()
    if other is None:
        pytest.skip("no second Python minor on this machine")
    wheel = str(channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl")
    venv = make_venv(tmp_path / "proj" / ".venv", sys.executable, wheel)
    rebuilt = make_venv(tmp_path / "other" / ".venv", other, wheel)
    lock = tmp_path / "proj" / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "-o", str(lock)) == 0
    custom = yaml.safe_load(lock.read_text())["metadata"]["custom_metadata"]
    version = platform.python_version()
    assert custom["envguard.linux-64.python"] == f"cpython {version}"
    env = condalock.read(lock, "linux-64")
    assert (env.python, env.python_implementation) == (version, "cpython")
    assert check_out(venv, lock, capsys) == (0, f"OK: {venv} matches {lock}\n")
    code, out = check_out(rebuilt, lock, capsys)
    assert code == 1, out
    assert f"python: {version} in the lock, {other.name[len('python') :]}." in out, out
