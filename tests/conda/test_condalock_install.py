"""issue 39: `conda-lock install` (conda-lock 4.0.3, the format's reference installer) of envguard's
conda-lock.yml with the real conda 26.7.1 builds the whole environment, pip packages included: conda creates
the conda part from the lock's URLs, then `conda run -p PREFIX pip install --no-deps -r` installs each pip
entry from its wheel URL, checking its `#sha256=`; `envguard check` of the result is clean.

The environment's python is the fixture's isolated one (its sys.prefix is the prefix it is installed in) with
a real pip, so pip installs into that prefix and nowhere else."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envguard.prefix.pip_dist import read_pip_packages
from tests.helpers import MakePrefix, check_out, envguard, install, pip_install
from tests.pipindex import LOCAL_VERSION
from tests.realconda import Conda

pytestmark = pytest.mark.slow

CONDA_LOCK = Path(sys.executable).with_name("conda-lock")


def _prefix_of(python: Path) -> str:
    """sys.prefix of an interpreter, as it reports it."""
    done = subprocess.run(
        [str(python), "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_isolated_python_is_its_prefixs_own_under_conda_and_rattler(
    conda: Conda, channels: dict[str, Path], isolated_channel: Path, pkgs_cache: Path, tmp_path: Path
) -> None:
    by_conda = tmp_path / "by-conda"
    conda.run(
        "create", "--yes", "--prefix", str(by_conda), *_isolated(channels, isolated_channel), "python", "pip"
    )
    by_rattler = install(
        tmp_path / "by-rattler", ["python", "pip"], [isolated_channel, channels["forge"]], cache=pkgs_cache
    )
    for prefix in (by_conda, by_rattler):
        assert _prefix_of(prefix / "bin" / "python") == str(prefix)
        done = subprocess.run(
            [str(prefix / "bin" / "pip"), "--version"], capture_output=True, text=True, check=True
        )
        assert f"from {prefix}/lib/python" in done.stdout  # the prefix's own pip (an entry point conda wrote)


def _isolated(channels: dict[str, Path], isolated: Path) -> list[str]:
    """conda's channel options for the isolated python and pip first, the forge channel for the rest."""
    return ["--override-channels", "-c", isolated.as_uri(), "-c", channels["forge"].resolve().as_uri()]


def _conda_lock_install(
    conda: Conda, lock: Path, prefix: Path, guard: Path
) -> subprocess.CompletedProcess[str]:
    """`conda-lock install --conda KIT -p PREFIX LOCK`, with a `pip` first on PATH that fails loudly: pip run
    anywhere but in the activated PREFIX (whose bin comes first once activated) is a failed test, never an
    install into the test's own venv or the system's python."""
    if not CONDA_LOCK.exists():
        pytest.skip("conda-lock is not installed next to this interpreter")
    guard.mkdir(exist_ok=True)
    (guard / "pip").write_text(
        '#!/bin/sh\necho "pip ran outside the environment being installed" >&2\nexit 97\n'
    )
    (guard / "pip").chmod(0o755)
    path = os.pathsep.join([str(guard), str(conda.kit.bin), "/usr/bin", "/bin"])
    return subprocess.run(
        [str(CONDA_LOCK), "install", "--conda", str(conda.kit.exe), "-p", str(prefix), str(lock)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": path},
        cwd=lock.parent,
        timeout=600,
    )


def test_conda_lock_install_of_envguards_lock_installs_every_pip_package(
    conda: Conda,
    channels: dict[str, Path],
    isolated_channel: Path,
    second_index: tuple[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    index, _packages = second_index
    source = tmp_path / "src"
    conda.run(
        "create",
        "--yes",
        "--prefix",
        str(source),
        *_isolated(channels, isolated_channel),
        "python",
        "pip",
        "six",
    )
    (source / "pip.conf").write_text(f"[global]\nextra-index-url = {index}\n")  # the environment's own index
    wheel = shutil.copy(
        channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl", tmp_path
    )  # a plain wheel file
    pip = [str(source / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps"]
    subprocess.run(
        [*pip, f"torchish=={LOCAL_VERSION}", "helperish==1.0", wheel], check=True, capture_output=True
    )
    lock = tmp_path / "project" / "conda-lock.yml"
    lock.parent.mkdir()
    assert envguard("lock", str(source), "--no-probe", "--include-local", "-o", str(lock)) == 0
    locked = {e["name"]: e for e in yaml.safe_load(lock.read_text())["package"] if e["manager"] == "pip"}
    assert sorted(locked) == ["helperish", "tinyproj", "torchish"]

    target = tmp_path / "new"
    done = _conda_lock_install(conda, lock, target, tmp_path / "guard")
    assert done.returncode == 0, done.stderr[-3000:]
    installed = {p.name: p for p in read_pip_packages(target)[0]}
    assert {name: p.version for name, p in installed.items()} == {n: e["version"] for n, e in locked.items()}
    for name, entry in locked.items():  # pip checked each `#sha256=` and recorded it (direct_url.json)
        assert installed[name].sha256 == entry["hash"]["sha256"], name
    assert check_out(target, lock, capsys) == (0, f"OK: {target} matches {lock}\n")

    # the same file name, other bytes: pip refuses it, conda-lock install fails (never a silent install)
    Path(wheel).write_bytes(Path(wheel).read_bytes() + b"\0")
    done = _conda_lock_install(conda, lock, tmp_path / "tampered", tmp_path / "guard")
    assert done.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in done.stderr, done.stderr[-3000:]


def test_conda_create_file_never_quietly_drops_the_pip_packages(
    conda: Conda,
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """conda-lockfiles 0.2.2 (`conda create --file conda-lock.yml`) refuses the pip entries (exit 1, nothing
    created); under another name conda's environment.yml reader creates an empty environment and exits 0, the
    case the lock's header warns about, and `envguard check --lock` of it lists every package it lacks."""
    source = make_prefix(["python=3.11", "pip", "six"])
    pip_install(source, str(channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl"))
    lock = tmp_path / "project" / "conda-lock.yml"
    lock.parent.mkdir()
    assert envguard("lock", str(source), "--no-probe", "--include-local", "-o", str(lock)) == 0
    assert "`conda create --file` does not" in lock.read_text()

    refused = tmp_path / "refused"
    done = conda.run("create", "--yes", "--prefix", str(refused), "--file", str(lock), check=False)
    assert done.returncode == 1 and "Input should be 'conda' or 'pypi'" in done.stdout + done.stderr
    assert not refused.exists()

    renamed = shutil.copy(lock, lock.with_name("env-lock.yml"))
    empty = tmp_path / "empty"
    conda.run("create", "--yes", "--prefix", str(empty), "--file", str(renamed))  # exit 0
    assert not list((empty / "conda-meta").glob("*.json"))
    code, out = check_out(empty, lock, capsys)
    assert code == 1
    for name in ("python", "pip", "six", "tinyproj"):
        assert f"{name} " in out, out
