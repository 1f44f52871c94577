"""pip entries of a live lock: the wheel a package was installed from, with its sha256, where pip recorded it
(direct_url.json); else clearly name==version only, in envguard's metadata (no made-up index URL, no entry
conda-lock would turn into a line pip rejects). conda-lock still reads the lock."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
import yaml

from envguard.formats.condalock import read as condalock
from tests.helpers import MakePrefix, envguard, make_venv, pip_install


def test_pip_entries_carry_the_wheel_and_its_sha256_or_say_name_version_only(
    tmp_path: Path, channels: dict[str, Path]
) -> None:
    from conda_lock.lockfile import parse_conda_lock_file

    wheels = channels["wheels"]
    wheel = wheels / "tinyproj-1.0.0-py3-none-any.whl"
    # tinyproj from its file (pip records the URL and hash), other-pkg from an index (pip records neither)
    venv = make_venv(tmp_path / ".venv", sys.executable, str(wheel), "--find-links", str(wheels), "other-pkg")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "--include-local", "-o", str(lock)) == 0
    text = lock.read_text()
    data = yaml.safe_load(text)
    entries = {e["name"]: e for e in data["package"]}
    assert entries["tinyproj"]["url"] == wheel.as_uri()
    assert entries["tinyproj"]["hash"] == {"sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}
    # no file known: no `package:` entry (conda-lock would hand pip `other-pkg @ other-pkg==0.3.0`, which pip
    # rejects, failing every pip package), name==version in envguard's metadata
    assert "other-pkg" not in entries
    assert "/simple/" not in text
    custom = data["metadata"]["custom_metadata"]
    assert custom["envguard.linux-64.pip_by_version"] == "other-pkg==0.3.0"
    assert "other-pkg: name==version only" in text  # the header says so too
    env = condalock.read(lock, "linux-64")
    by_name = {p.name: p for p in env.pip_packages()}
    assert by_name["tinyproj"].sha256 == entries["tinyproj"]["hash"]["sha256"]
    assert by_name["other-pkg"].url == "" and not by_name["other-pkg"].sha256
    parsed = parse_conda_lock_file(lock)  # conda-lock's own model still accepts every entry
    assert {p.name for p in parsed.package} == {"tinyproj"}


def test_a_local_path_is_written_only_when_asked(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 13, item 12: a wheel installed from this machine's disk is locked as name==version (its path
    would mean nothing elsewhere and says where your files are); the lock still checks clean, and installing
    it (verify, create --lock) refuses in one line instead of failing inside pip."""
    wheels = channels["wheels"]
    venv = make_venv(tmp_path / ".venv", sys.executable, str(wheels / "tinyproj-1.0.0-py3-none-any.whl"))
    lock = tmp_path / "conda-lock.yml"
    capsys.readouterr()
    assert envguard("lock", str(venv), "--no-probe", "-o", str(lock)) == 0
    err = capsys.readouterr().err
    assert "tinyproj were installed from a local path" in err and "--include-local" in err
    text = lock.read_text()
    assert str(wheels) not in text  # the wheel's path; the Reproduce line names the venv (absolute: no git)
    assert all("envguard lock " in line for line in text.splitlines() if str(tmp_path) in line)
    data = yaml.safe_load(text)
    assert "tinyproj" not in {e["name"] for e in data["package"]}  # no file to name: envguard's metadata only
    assert data["metadata"]["custom_metadata"]["envguard.linux-64.pip_by_version"] == "tinyproj==1.0.0"
    assert envguard("check", str(venv), "--lock", str(lock)) == 0  # any local path matches the unwritten one
    capsys.readouterr()
    code = envguard("verify", "--lock", str(lock))  # the rebuild refuses before anything is installed
    err = capsys.readouterr().err
    assert code == 2 and "tinyproj" in err and "--include-local" in err and len(err.splitlines()) == 1
    assert envguard("lock", str(venv), "--no-probe", "--include-local", "-o", str(lock)) == 0
    assert (wheels / "tinyproj-1.0.0-py3-none-any.whl").as_uri() in lock.read_text()


def test_pip_packages_with_no_conda_pip_are_warned_about_and_the_header_says_how_they_install(
    make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 39: `conda-lock install` runs pip as `conda run -p PREFIX pip`: with no conda `pip` package in
    the lock that is whatever pip PATH names next, another environment's, where the pip packages land
    (measured: exit 0, the new environment without them). The header says which installers take pip entries
    (conda create --file does not, under any name) and, with no conda pip, the writer warns and the header
    says it."""
    wheel = channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl"
    bare = make_prefix(["python=3.11"], name="bare")
    with_pip = make_prefix(["python=3.11", "pip"], name="with-pip")
    for prefix in (bare, with_pip):
        pip_install(prefix, str(wheel))
    said: dict[str, tuple[str, str]] = {}
    for prefix in (bare, with_pip):
        lock = tmp_path / prefix.name / "conda-lock.yml"
        capsys.readouterr()
        assert envguard("lock", str(prefix), "--no-probe", "--include-local", "-o", str(lock)) == 0
        said[prefix.name] = (lock.read_text().split("\nversion: 1\n")[0], capsys.readouterr().err)
    for header, _err in said.values():
        assert "pip packages: install with `conda-lock install`" in header
        assert "`conda create --file` does not" in header and "EMPTY environment" in header
    header, err = said["bare"]
    assert "no conda `pip` package" in header and "no conda `pip` package" in err
    assert "no conda `pip` package" not in said["with-pip"][0] + said["with-pip"][1]
