"""The real conda 26.7.1 with envguard installed into its base (so conda loads envguard's plugin), built once
per run; and a channel with `fill000` (a package no lock has) and torch's family in two builds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO, fixture_channel
from tests.realconda import KIT, NO_KIT, Conda, CondaKit, build_kit, per_test_condarc


@pytest.fixture(scope="session")
def extra_channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Dependency-free packages: `fill000` (what a `conda install` that drifts adds), torchvision 0.16.0
    (CUDA 12.1) and torchaudio 2.1.0 (CPU)."""
    out = tmp_path_factory.mktemp("extra-channel")
    recipes = [
        fixture_channel.Recipe(
            name="fill000", version="1.0.0", build="h0000000_0", files={"share/fill000/a.txt": "x\n"}
        ),
        # torch's family as the pytorch channel builds it: a CUDA torchvision, a CPU torchaudio
        fixture_channel.Recipe(name="torchvision", version="0.16.0", build="py311_cu121"),
        fixture_channel.Recipe(name="torchaudio", version="2.1.0", build="py311_cpu"),
    ]
    for recipe in recipes:
        fixture_channel.build_package(recipe, out)
    fixture_channel.index(out)
    return out


@pytest.fixture(scope="session")
def plugin_kit(
    tmp_path_factory: pytest.TempPathFactory, channels: dict[str, Path], extra_channel: Path
) -> CondaKit:
    """conda's base venv with this checkout of envguard installed (editable: the tests run this code)."""
    if not KIT.is_file():
        pytest.skip(NO_KIT)
    urls = [channels["forge"].resolve().as_uri(), extra_channel.resolve().as_uri()]
    kit = build_kit(tmp_path_factory.mktemp("conda-kit-envguard"), urls)
    done = subprocess.run(
        [str(kit.root / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", "-e", str(REPO)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"installing envguard into conda's base failed:\n{done.stdout}\n{done.stderr}")
    return kit


@pytest.fixture
def pconda(
    plugin_kit: CondaKit, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Conda:
    """The kit with envguard's plugin, sharing HOME, CONDARC and the caches with envguard."""
    condarc, envs = per_test_condarc(plugin_kit, tmp_path)
    monkeypatch.setenv("PATH", f"{plugin_kit.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("CONDARC", str(condarc))
    monkeypatch.setenv("ENVGUARD_CONDA_HOME", str(isolated_home))
    return Conda(plugin_kit, isolated_home, condarc, envs)
