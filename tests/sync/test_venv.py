"""Venvs (issue 26): every drift kind check finds in a venv is repaired by running the printed fix lines as
printed, in order — `envguard sync` and pip lines with real requirements in the venv's own pip — and check is
clean after; a venv without pip of its own (a `uv venv`) is synced too; and the project itself, pip-installed
from its folder, is locked relative to the lock and installed from there by sync and verify."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.helpers import check_out, envguard, make_project, make_venv, venv_pip, venv_with_pip

TINY = "tinyproj-1.0.0-py3-none-any.whl"


def fix_lines(out: str) -> list[str]:
    return [line.strip() for line in out.split("\nHow to fix:\n", 1)[1].splitlines()]


def run_as_printed(lines: list[str], capsys: pytest.CaptureFixture[str], wheels: Path) -> None:
    """Each line as a shell would run it: envguard's in this process, the others as programs (offline: pip
    finds only the fixture wheels)."""
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    for line in lines:
        words = shlex.split(line)
        if words[0] == "envguard":
            assert envguard(*words[1:]) == 0, (line, capsys.readouterr())
        else:
            done = subprocess.run(words, capture_output=True, text=True, env=env, check=False)
            assert done.returncode == 0, (line, done.stderr)


Drift = Callable[[Path, Path], None]
DRIFTS: dict[str, tuple[Drift, list[str]]] = {
    "pip changed": (
        lambda venv, wheels: venv_pip(
            venv, "install", "--no-deps", str(wheels / "tinyproj-1.1.0-py3-none-any.whl")
        ),
        ["install --no-deps 'tinyproj @ {wheel}'"],
    ),
    "pip missing": (
        lambda venv, wheels: venv_pip(venv, "uninstall", "-y", "tinyproj"),
        ["install --no-deps 'tinyproj @ {wheel}'"],
    ),
    "pip extra": (
        lambda venv, wheels: venv_pip(
            venv, "install", "--no-deps", str(wheels / "other_pkg-0.3.0-py3-none-any.whl")
        ),
        ["uninstall -y other-pkg"],
    ),
}


def test_every_pip_drift_of_a_venv_is_fixed_by_the_printed_lines(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    wheels = channels["wheels"]
    venv = venv_with_pip(tmp_path / "project" / ".venv")
    venv_pip(venv, "install", "--no-deps", str(wheels / TINY))
    lock = tmp_path / "project" / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "--include-local", "-o", str(lock)) == 0
    assert check_out(venv, lock, capsys) == (0, f"OK: {venv} matches {lock}\n")
    python = f"{venv}/bin/python -m pip "
    for name, (mutate, pip_lines) in DRIFTS.items():
        mutate(venv, wheels)
        code, out = check_out(venv, lock, capsys)
        assert code == 1, (name, out)
        lines = fix_lines(out)
        wanted = [python + p.format(wheel=(wheels / TINY).as_uri()) for p in pip_lines]
        assert lines == [f"envguard sync {venv} --lock {lock} --yes", *wanted], (name, out)
        assert "file:'" not in out and "create --lock" not in out
        run_as_printed(lines, capsys, wheels)
        assert check_out(venv, lock, capsys) == (0, f"OK: {venv} matches {lock}\n"), name


def test_files_altered_and_a_spec_unsatisfied_in_a_venv(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    wheels = channels["wheels"]
    venv = venv_with_pip(tmp_path / ".venv")
    venv_pip(venv, "install", "--no-deps", str(wheels / TINY))
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "--include-local", "-o", str(lock)) == 0
    module = next((venv / "lib").glob("python3*/site-packages")) / "tinyproj" / "__init__.py"
    module.write_text(module.read_text() + "# edited\n")
    code, out = check_out(venv, lock, capsys, "--files")
    assert code == 1 and fix_lines(out) == [f"envguard sync {venv} --lock {lock} --files --yes"], out
    run_as_printed(fix_lines(out), capsys, wheels)
    assert check_out(venv, lock, capsys, "--files") == (0, f"OK: {venv} matches {lock}\n")
    # against an environment.yml: a venv gets the pip line (no conda environment to rebuild)
    spec = tmp_path / "environment.yml"
    spec.write_text("dependencies:\n  - pip:\n    - tinyproj==1.1.0\n")
    capsys.readouterr()
    assert envguard("check", str(venv), "-f", str(spec)) == 1
    lines = fix_lines(capsys.readouterr().out)
    assert lines == [f"{venv}/bin/python -m pip install --no-deps tinyproj==1.1.0"]
    run_as_printed(lines, capsys, wheels)
    assert envguard("check", str(venv), "-f", str(spec)) == 0, capsys.readouterr().out


def test_a_venv_without_pip_is_synced_with_envguards_pip(
    tmp_path: Path,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wheels = channels["wheels"]
    venv = make_venv(
        tmp_path / ".venv", sys.executable, str(wheels / TINY)
    )  # --without-pip, as uv makes them
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "--include-local", "-o", str(lock)) == 0
    make_venv(
        venv,
        sys.executable,
        str(wheels / "tinyproj-1.1.0-py3-none-any.whl"),
        str(wheels / "other_pkg-0.3.0-py3-none-any.whl"),
    )
    code, out = check_out(venv, lock, capsys)
    assert code == 1 and fix_lines(out) == [f"envguard sync {venv} --lock {lock} --yes"], out  # no pip lines
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    run_as_printed(fix_lines(out), capsys, wheels)
    assert check_out(venv, lock, capsys, "--files") == (0, f"OK: {venv} matches {lock}\n")
    assert not (venv / "bin" / "pip").exists()  # still a venv without pip


@pytest.mark.parametrize("editable", [False, True], ids=["pip install .", "pip install -e ."])
def test_the_project_itself_is_locked_relative_and_installed_from_there(
    editable: bool,
    tmp_path: Path,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README's own flow on a small project: `pip install .` into .venv, lock into .venv, verify from the
    project's root; sync puts the project back from its folder; the lock names no folder of ours."""
    from conda_lock.lockfile import parse_conda_lock_file

    project = make_project(tmp_path / "clone" / "proja")
    subprocess.run(
        ["git", "init", "-q", str(project)], check=True
    )  # a clone: the lock names paths from its root
    venv = venv_with_pip(project / ".venv")
    venv_pip(venv, "install", "--no-deps", *(["-e"] if editable else []), str(project))
    lock = project / ".venv" / "conda-lock.yml"
    monkeypatch.chdir(project)
    capsys.readouterr()
    assert envguard("lock", ".venv", "--no-probe", "-o", ".venv/conda-lock.yml") == 0
    err = capsys.readouterr().err
    assert "local path" not in err, err  # nothing left out: the project is recorded relative to the lock
    text = lock.read_text()
    entry = next(e for e in yaml.safe_load(text)["package"] if e["name"] == "proja")
    assert (entry["url"], entry["hash"]) == ("file:..", {}) and str(tmp_path) not in text
    origins = json.loads(yaml.safe_load(text)["metadata"]["custom_metadata"]["envguard.linux-64.pip_origins"])
    assert origins["proja"] == ({"editable": True, "url": "file:.."} if editable else {"url": "file:.."})
    assert {p.name for p in parse_conda_lock_file(lock).package} >= {"proja"}  # conda-lock reads it
    assert envguard("check", "--lock", ".venv/conda-lock.yml", ".venv") == 0
    # verify rebuilds it from the project's root: pip and setuptools from ensurepip's own wheels, offline
    # ensurepip's own wheels: in CPython's tree, or where Debian's python3 keeps them
    bundled = [
        Path(sys.base_prefix)
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "ensurepip"
        / "_bundled",
        Path("/usr/share/python-wheels"),
    ]
    monkeypatch.setenv("PIP_FIND_LINKS", " ".join(str(b) for b in bundled if b.is_dir()))
    code = envguard("verify", "--lock", ".venv/conda-lock.yml", "--json")
    out, err = capsys.readouterr()
    assert code == 0, (out, err)
    assert "is ignored" not in err  # no --find-links folder that does not exist
    # sync puts the project back from its folder, from any working folder
    venv_pip(venv, "uninstall", "-y", "proja")
    monkeypatch.chdir(tmp_path)
    assert envguard("sync", str(venv), "--lock", str(lock), "--yes") == 0, capsys.readouterr()
    assert check_out(venv, lock, capsys, "--files") == (0, f"OK: {venv} matches {lock}\n")
    # another clone of the project with the same lock (committed with it) is its own checkout
    other = make_project(tmp_path / "other" / "proja")
    (other / ".venv").mkdir()
    (other / ".venv" / "conda-lock.yml").write_text(text)
    code, out = check_out(venv, other / ".venv" / "conda-lock.yml", capsys)
    assert code == 1 and f"from {(other).as_uri()} in the lock" in out, out
    # the same lock named the same way from each clone's folder means that clone (a parse read back from
    # envguard's cache too)
    for clone, clean in ((project, 0), (other, 1), (project, 0)):
        monkeypatch.chdir(clone / ".venv")
        assert check_out(venv, Path("conda-lock.yml"), capsys)[0] == clean, clone
