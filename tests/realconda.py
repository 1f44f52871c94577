"""The real conda 26.7.1 CLI for tests, built by ../shared/tools/conda-kit/make-conda.sh (classic solver,
offline, with the conda-lockfiles plugin) once per test run; see tests/conftest.py `conda_kit` / `conda`.

conda and envguard see one world: the same HOME (the kit's wrapper honours ENVGUARD_CONDA_HOME), the same
CONDARC (the kit's, with a per-test envs dir), the same CONDA_PKGS_DIRS, so one `~/.conda/environments.txt`.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers import SHARED

KIT = SHARED / "tools" / "conda-kit" / "make-conda.sh"


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
    return CondaKit(root, tuple(channel_urls))


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
