"""The "Reproduce:" line a lock's header prints, pasted as is from the lock's folder, writes the same file,
and the install line it suggests works (conda for conda locks; never conda-lock for a pip-only lock)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import envguard, fixture_channel
from tests.realconda import Conda, package_keys

pytestmark = pytest.mark.slow


def reproduce_line(text: str) -> list[str]:
    """The command of the header: `# Reproduce: CMD` (explicit) or the line after `# Reproduce it with:`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# Reproduce: "):
            return shlex.split(line.removeprefix("# Reproduce: "))
        if line.startswith("# Reproduce it with:"):
            return shlex.split(lines[i + 1].removeprefix("#").strip())
    raise AssertionError(f"no Reproduce line in:\n{text[:500]}")


def rerun(header_of: Path, moved_to: Path) -> None:
    """Run the Reproduce command (in-process) from the lock's folder after moving the original aside."""
    argv = reproduce_line(header_of.read_text())
    assert argv[:2] == ["envguard", "lock"], argv
    header_of.rename(moved_to)
    assert envguard(*argv[1:], cwd=header_of.parent) == 0


def test_explicit_header_reproduces_the_explicit_file(
    conda: Conda, channels: dict[str, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "environment.yml").write_text(
        f"channels: [{channels['forge'].resolve().as_uri()}]\ndependencies: [python=3.11, numpy=1.26]\n"
    )
    assert (
        envguard(
            "lock",
            "-f",
            "environment.yml",
            "--no-cuda",
            "--format",
            "explicit",
            "-o",
            "y2-{platform}.lock",
            cwd=folder,
        )
        == 0
    )
    written = folder / "y2-linux-64.lock"
    assert "--format explicit" in written.read_text()
    rerun(written, tmp_path / "first.lock")
    assert written.read_text() == (tmp_path / "first.lock").read_text()
    assert not (folder / "y2-{platform}.lock").exists()
    conda.run("create", "--yes", "--prefix", str(tmp_path / "env"), "--file", str(written))
    assert {p["name"] for p in conda.listed(tmp_path / "env")} == {"python", "numpy", "zlib"}


@pytest.mark.parametrize("fmt", ["conda-lock", "explicit"])
def test_live_header_names_the_environment_and_keeps_no_probe(conda: Conda, tmp_path: Path, fmt: str) -> None:
    conda.run("create", "--yes", "--name", "demo", "python=3.11", "six")
    folder = tmp_path / "project"
    folder.mkdir()
    out = "conda-lock.yml" if fmt == "conda-lock" else "demo.lock"
    assert envguard("lock", "name:demo", "--no-probe", "--format", fmt, "-o", out, cwd=folder) == 0
    text = (folder / out).read_text()
    argv = reproduce_line(text)
    assert "name:demo" in argv and "--no-probe" in argv and "<" not in " ".join(argv)
    rerun(folder / out, tmp_path / "first")
    assert (folder / out).read_text() == (tmp_path / "first").read_text()
    # a prefix outside any envs dir: its path relative to the lock's folder (no machine paths), runnable
    other = tmp_path / "elsewhere" / "env"
    conda.run("create", "--yes", "--prefix", str(other), "python=3.11")
    assert envguard("lock", str(other), "--no-probe", "-o", "other.yml", cwd=folder) == 0
    assert str(other) not in (folder / "other.yml").read_text()
    rerun(folder / "other.yml", tmp_path / "other-first.yml")
    assert (folder / "other.yml").read_text() == (tmp_path / "other-first.yml").read_text()
    target = tmp_path / "installed"
    if fmt == "conda-lock":
        conda.run("create", "--yes", "--prefix", str(target), "--file", str(folder / out))
    else:
        conda.run("create", "--yes", "--prefix", str(target), "--file", str(folder / out))
    assert package_keys(conda.listed(target)) == package_keys(conda.listed(conda.envs / "demo"))


def test_a_pip_only_lock_does_not_suggest_conda_lock_install(
    channels: dict[str, Path], tmp_path: Path
) -> None:
    venv = tmp_path / "project" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    wheel = fixture_channel.build_wheel("tinyproj", "1.0.0", tmp_path / "wheels")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    folder = venv.parent
    assert envguard("lock", ".venv", "--no-probe", "-o", "conda-lock.yml", cwd=folder) == 0
    text = (folder / "conda-lock.yml").read_text()
    assert "conda-lock install" not in text
    assert "YOURENV/bin/pip install --no-deps" in text
    argv = reproduce_line(text)
    assert argv == ["envguard", "lock", ".venv", "--no-probe", "-o", "conda-lock.yml"]
