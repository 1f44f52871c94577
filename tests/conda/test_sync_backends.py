"""`envguard sync` with the real conda 26.7.1 CLI: a conda-made environment synced through conda, and through
the embedded engine; afterwards check (and check --files) is clean, conda's own `conda list` agrees, and
`conda list --revisions` reads the history. micromamba (which cannot run here) is a stand-in on PATH that
records its arguments and hands the same command to the real conda."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.helpers import check_out, envguard
from tests.realconda import Conda, package_keys, same_packages

pytestmark = pytest.mark.slow


def conda_env(conda: Conda, prefix: Path, lock: Path) -> None:
    """A conda-made environment, its lock, then drift made with conda itself."""
    conda.run("create", "--yes", "--prefix", str(prefix), "python=3.11", "numpy=1.26", "zlib", "requests")
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    conda.run("install", "--yes", "--prefix", str(prefix), "numpy=2.0", "six")
    conda.run("remove", "--yes", "--prefix", str(prefix), "requests")


def snapshot(prefix: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert envguard("snapshot", str(prefix), "--no-probe") == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


@pytest.mark.parametrize("backend", ["conda", "embedded"])
def test_sync_a_conda_environment_and_conda_agrees(
    backend: str, conda: Conda, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = tmp_path / "env", tmp_path / "conda-lock.yml"
    conda_env(conda, prefix, lock)
    before = package_keys(conda.listed(prefix))
    history = conda.run("list", "--revisions", "--prefix", str(prefix)).stdout
    capsys.readouterr()
    code = envguard("sync", str(prefix), "--lock", str(lock), "--backend", backend, "--yes", "--json")
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert code == 0 and data["in_sync"] and data["after"]["clean"], (out, err)
    assert data["backend"].startswith("conda 26.7.1" if backend == "conda" else "embedded")
    assert check_out(prefix, lock, capsys, "--files") == (0, f"OK: {prefix} matches {lock}\n")
    listed = conda.listed(prefix)
    same_packages(listed, snapshot(prefix, capsys))
    assert {p["name"]: p["version"] for p in listed} == {
        "python": "3.11.9",
        "numpy": "1.26.4",
        "zlib": "1.3.1",
        "requests": "2.32.3",
    }
    assert package_keys(listed) != before
    revisions = conda.run("list", "--revisions", "--prefix", str(prefix)).stdout
    assert revisions.startswith(history.rstrip())  # conda reads every revision: its own, or envguard's
    new = revisions[len(history.rstrip()) :]
    assert "numpy  {2.0.1 (" in new and ") -> 1.26.4 (" in new, new
    assert "-six-1.16.0" in new and "+requests-2.32.3" in new, new


def test_sync_through_micromamba_passes_its_own_arguments(
    conda: Conda, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix, lock = tmp_path / "env", tmp_path / "conda-lock.yml"
    conda_env(conda, prefix, lock)
    folder = tmp_path / "fakebin"
    folder.mkdir()
    log = tmp_path / "argv.log"
    fake = folder / "micromamba"
    fake.write_text(f'#!/bin/sh\nprintf \'%s\\n\' "$*" >> "{log}"\nexec "{conda.kit.exe}" "$@"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    capsys.readouterr()
    code = envguard("sync", str(prefix), "--lock", str(lock), "--yes")  # auto: micromamba comes first
    assert code == 0, capsys.readouterr()
    calls = [line.split() for line in log.read_text().splitlines()]
    assert ["--version"] in calls
    install = next(c for c in calls if c[0] == "install")
    assert install[:4] == ["install", "--yes", "--prefix", str(prefix)] and install[4] == "--file"
    assert "--force-reinstall" in install  # numpy is replaced
    assert ["remove", "--yes", "--prefix", str(prefix), "--force", "six", "--json"] in calls
    assert check_out(prefix, lock, capsys, "--files") == (0, f"OK: {prefix} matches {lock}\n")
