"""The "Reproduce:" line a lock's header prints, pasted as is into a shell in another folder, writes the
same file (inside a git work tree from any folder of any checkout; outside one from any folder), and the
install line it suggests works (conda for conda locks; never conda-lock for a pip-only lock)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import envguard, fixture_channel
from tests.realconda import Conda, package_keys

pytestmark = pytest.mark.slow


def reproduce_line(text: str) -> str:
    """The command of the header: `# Reproduce: CMD` (explicit) or the line after `# Reproduce it with:`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# Reproduce: "):
            return line.removeprefix("# Reproduce: ")
        if line.startswith("# Reproduce it with:"):
            return lines[i + 1].removeprefix("#").strip()
    raise AssertionError(f"no Reproduce line in:\n{text[:500]}")


def rerun(header_of: Path, moved_to: Path, where: Path) -> str:
    """Paste the Reproduce line into bash in folder `where` after moving the lock aside; the line it ran."""
    line = reproduce_line(header_of.read_text())
    header_of.rename(moved_to)
    where.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(["bash", "-c", line], cwd=where, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
    return line


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
    line = rerun(written, tmp_path / "first.lock", tmp_path / "any" / "folder")
    assert shlex.split(line)[:4] == ["envguard", "lock", "-f", str(folder / "environment.yml")]  # no git
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
    argv = shlex.split(reproduce_line(text))
    assert "name:demo" in argv and "--no-probe" in argv and "<" not in " ".join(argv)
    rerun(folder / out, tmp_path / "first", tmp_path)
    assert (folder / out).read_text() == (tmp_path / "first").read_text()
    # a prefix outside any envs dir, no git: absolute paths, runnable from anywhere
    other = tmp_path / "elsewhere" / "env"
    conda.run("create", "--yes", "--prefix", str(other), "python=3.11")
    assert envguard("lock", str(other), "--no-probe", "-o", "other.yml", cwd=folder) == 0
    rerun(folder / "other.yml", tmp_path / "other-first.yml", other)
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
    argv = shlex.split(reproduce_line(text))
    assert argv == ["envguard", "lock", str(venv), "--no-probe", "-o", str(folder / "conda-lock.yml")]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=cwd, check=True)


def test_in_a_git_work_tree_the_line_runs_from_any_folder_of_any_checkout(
    channels: dict[str, Path], tmp_path: Path
) -> None:
    """The README's venv-in-the-clone case and a committed envs/ lock: paths relative to the repository's
    root, no machine path in the lock, and the line rewrites the same bytes in another clone, from a
    subfolder."""
    repo = tmp_path / "repo"
    (repo / "envs").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "envs" / "environment.yml").write_text(
        f"channels: [{channels['forge'].resolve().as_uri()}]\ndependencies: [python=3.11, zlib]\n"
    )
    assert envguard("lock", "-f", "environment.yml", "--no-cuda", cwd=repo / "envs") == 0
    lock = repo / "envs" / "conda-lock.yml"
    line = reproduce_line(lock.read_text())
    assert line == (
        '(cd "$(git rev-parse --show-toplevel)" && envguard lock -f envs/environment.yml --platform '
        f"{lock.read_text().split('platform: ', 1)[1].split()[0]} --no-cuda -o envs/conda-lock.yml)"
    )
    assert str(tmp_path) not in lock.read_text()
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "lock")
    clone = tmp_path / "teammate" / "checkout"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    rerun(clone / "envs" / "conda-lock.yml", tmp_path / "cloned-first.yml", clone / "src" / "deep")
    assert (clone / "envs" / "conda-lock.yml").read_text() == lock.read_text()
    # a venv inside the work tree (README's set-up: `.venv/conda-lock.yml` from the clone's root)
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    assert envguard("lock", ".venv", "--no-probe", "-o", ".venv/conda-lock.yml", cwd=repo) == 0
    line = reproduce_line((venv / "conda-lock.yml").read_text())
    assert line.endswith("&& envguard lock .venv --no-probe -o .venv/conda-lock.yml)")
    first = (venv / "conda-lock.yml").read_text()
    rerun(venv / "conda-lock.yml", tmp_path / "venv-first.yml", venv / "lib")
    assert (venv / "conda-lock.yml").read_text() == first
