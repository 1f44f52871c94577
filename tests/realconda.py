"""The real conda CLI for tests, once per test run; see tests/conftest.py `conda_kit` / `conda`.

Which conda: conda 26.7.1 built by ../shared/tools/conda-kit/make-conda.sh (classic solver, offline, with the
conda-lockfiles plugin) where ../shared has it; otherwise the `conda` on PATH (a Miniforge install, CI's
setup-miniconda), linked into a folder of its own beside the same offline condarc; otherwise the tests skip,
and the run ends with one line naming what they need (`NO_CONDA`).

conda and envguard see one world: the same HOME (the kit honours ENVGUARD_CONDA_HOME), the same CONDARC
(the kit's, with a per-test envs dir), the same CONDA_PKGS_DIRS, so one `~/.conda/environments.txt`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers import SHARED

KIT = SHARED / "tools" / "conda-kit" / "make-conda.sh"
REALCONDA = Path(__file__)
NO_CONDA = (
    "no conda: the real-conda tests need ../shared/tools/conda-kit beside the repo (ENVGUARD_TEST_SHARED) "
    "or a conda on PATH (Miniforge, setup-miniconda)"
)
NO_SHARED = (
    "no ../shared: these tests read its recorded conda outputs and reference files (ENVGUARD_TEST_SHARED)"
)
NO_KIT = (
    "no ../shared/tools/conda-kit: the conda-plugin tests install this checkout into the kit's own base "
    "(never into a conda found on PATH)"
)


@dataclass(frozen=True)
class CondaKit:
    """A built kit: ROOT/bin/conda and the condarc make-conda.sh wrote (channels = the fixture channels)."""

    root: Path
    channels: tuple[str, ...]

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def exe(self) -> Path:
        return self.bin / "conda"

    @property
    def condarc(self) -> Path:
        return self.root / "condarc"


def build_kit(root: Path, channel_urls: list[str]) -> CondaKit:
    """Run make-conda.sh ROOT CHANNEL...; a failure shows the kit's own output."""
    done = subprocess.run(
        ["bash", str(KIT), str(root), *channel_urls], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"make-conda.sh failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    # An installed conda has bin/conda in its root prefix, and `conda run` activates through it (its hook
    # names context.conda_exe, ROOT/venv/bin/conda here); the kit runs `python -m conda` and has none, so
    # `conda run` would run its command unactivated, with whatever `pip` PATH names first
    root_conda = root / "venv" / "bin" / "conda"
    if not root_conda.exists():
        root_conda.symlink_to(root / "bin" / "conda")
    return CondaKit(root, tuple(channel_urls))


def conda_on_path() -> Path | None:
    """The `conda` executable PATH names (Miniforge's condabin/conda, setup-miniconda's), or None."""
    found = shutil.which("conda")
    return Path(found).resolve() if found else None


def wrap_conda(root: Path, exe: Path, channel_urls: list[str]) -> CondaKit:
    """ROOT/bin/conda, a link to EXE, and ROOT/condarc written as make-conda.sh writes its own (offline, the
    classic solver, ROOT/pkgs and ROOT/envs, CHANNELS): the kit's shape around a conda from elsewhere. Only
    ROOT/bin goes on PATH, so that install's python and tools stay off it; through the link envguard still
    finds the install's root as it would (the executable's real location). The `conda` fixture sets CONDARC
    and HOME for each test."""
    for folder in ("bin", "pkgs", "envs"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    lines = [
        "solver: classic",
        "offline: true",
        "add_pip_as_python_dependency: false",
        "channel_priority: strict",
        f"pkgs_dirs: [{root / 'pkgs'}]",
        f"envs_dirs: [{root / 'envs'}]",
    ]
    if channel_urls:
        lines += ["channels:", *(f"  - {url}" for url in channel_urls)]
    (root / "condarc").write_text("\n".join(lines) + "\n")
    (root / "bin" / "conda").symlink_to(exe)
    done = subprocess.run(
        [str(root / "bin" / "conda"), "--version"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "CONDARC": str(root / "condarc")},
    )
    if done.returncode != 0:
        raise RuntimeError(f"{exe} --version failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    return CondaKit(root, tuple(channel_urls))


def real_conda(root: Path, channel_urls: list[str]) -> CondaKit | None:
    """The kit from ../shared where it is, else the conda on PATH wrapped, else None (skip: NO_CONDA)."""
    if KIT.is_file():
        return build_kit(root, channel_urls)
    exe = conda_on_path()
    return wrap_conda(root, exe, channel_urls) if exe is not None else None


@dataclass(frozen=True)
class Conda:
    """The kit set up for one test: `run`/`json` call the real CLI with the environment envguard also sees."""

    kit: CondaKit
    home: Path
    condarc: Path
    envs: Path

    def run(
        self, *args: str, check: bool = True, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.kit.exe), *args],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            stdin=subprocess.DEVNULL,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"conda {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
            )
        return done

    def json(self, *args: str, env: dict[str, str] | None = None) -> Any:
        return json.loads(self.run(*args, "--json", env=env).stdout)

    def listed(self, prefix: Path) -> list[dict[str, Any]]:
        """`conda list --json -p PREFIX`."""
        data = self.json("list", "-p", str(prefix))
        assert isinstance(data, list)
        return data


def per_test_condarc(kit: CondaKit, folder: Path) -> tuple[Path, Path]:
    """The kit's condarc with envs_dirs pointed at a folder of this test (named envs never leak between
    tests)."""
    envs = folder / "conda-envs"
    envs.mkdir(parents=True, exist_ok=True)
    lines = [ln for ln in kit.condarc.read_text().splitlines() if not ln.startswith("envs_dirs:")]
    condarc = folder / "condarc"
    condarc.write_text("\n".join([*lines, f"envs_dirs: [{envs}]"]) + "\n")
    return condarc, envs


def same_packages(conda_listed: list[dict[str, Any]], snapshot: dict[str, Any]) -> None:
    """`conda list --json` and `envguard snapshot --json` name the same conda packages (name, version, build,
    channel)."""
    ours = {(p["name"], p["version"], p["build"]) for p in snapshot["packages"] if p["manager"] == "conda"}
    theirs = {
        (p["name"], p["version"], p["build_string"]) for p in conda_listed if p.get("channel") != "pypi"
    }
    assert ours == theirs, (sorted(ours ^ theirs), "envguard vs conda")


def package_keys(listed: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    """(name, version, build, base_url) of a `conda list --json`."""
    return {(p["name"], p["version"], p["build_string"], p.get("base_url", "")) for p in listed}
