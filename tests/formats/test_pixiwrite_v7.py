"""`envguard lock --format pixi --pixi-version 7`: a version 7 pixi.lock written through py-rattler's lock
writer, read back by py-rattler with every package (conda and pypi) and by envguard, and installed into an
environment `envguard check` finds clean against it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from envguard.formats import pixilock, pixiwrite
from envguard.model import Package, PipOrigin, make_environment
from tests.helpers import check_out, envguard, spec_lock


def rattler_packages(path: Path, platform: str = "linux-64") -> tuple[list[Any], list[Any]]:
    """(conda records, pypi packages) of the default environment for `platform`, as py-rattler reads them."""
    import rattler

    env = rattler.LockFile.from_path(path).default_environment()
    assert env is not None
    chosen = next(p for p in env.platforms() if p.name == platform)
    return list(env.conda_repodata_records_for_platform(chosen) or []), list(
        env.pypi_packages_for_platform(chosen) or []
    )


def test_v7_is_read_back_by_rattler_with_every_package(
    channels: dict[str, Path], tmp_path: Path, pkgs_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import rattler

    conda_lock = spec_lock(tmp_path, channels["forge"], "python=3.11", "numpy=1.26", "six")
    pixi = tmp_path / "pixi.lock"
    yml = tmp_path / "environment.yml"
    args = ["lock", "-f", str(yml), "--no-cuda", "--format", "pixi", "--pixi-version", "7", "-o", str(pixi)]
    assert envguard(*args) == 0
    text = pixi.read_text()
    data = yaml.safe_load(text)
    assert data["version"] == 7 and "--pixi-version 7" in text
    assert [p["name"] for p in data["platforms"]] == ["linux-64"]
    assert any(v.startswith("__glibc=") for v in data["platforms"][0]["virtual-packages"])
    locked = pixilock.read(pixi, platform="linux-64")
    conda, _ = rattler_packages(pixi)
    assert sorted((r.name.normalized, str(r.version), str(r.build)) for r in conda) == sorted(
        (p.name, p.version, p.build) for p in locked.packages
    )
    assert {p.name for p in locked.packages} == {"numpy", "python", "six", "zlib"}
    six = next(r for r in conda if r.name.normalized == "six")
    assert six.noarch.python  # a noarch package that needs python is written as `noarch: python`
    prefix = tmp_path / "from-v7"
    asyncio.run(rattler.install(conda, prefix, cache_dir=pkgs_cache, show_progress=False))
    assert (prefix / "lib" / "python3.11" / "site-packages" / "six").is_dir()
    code, out = check_out(prefix, pixi, capsys)
    assert code == 0, out
    code, out = check_out(prefix, conda_lock, capsys)
    assert code == 0, out


def test_v7_writes_pypi_packages_with_a_url_and_leaves_out_the_rest(tmp_path: Path) -> None:
    conda = Package(
        "conda",
        "six",
        "1.16.0",
        "pyh_0",
        subdir="noarch",
        channel="https://conda.anaconda.org/conda-forge",
        url="https://conda.anaconda.org/conda-forge/noarch/six-1.16.0-pyh_0.conda",
        sha256="ab" * 32,
        depends=("python",),
    )
    wheel = Package(
        "pip", "wheelpkg", "2.0", origin=PipOrigin(url="https://host.example/wheelpkg-2.0-py3-none-any.whl")
    )
    index = Package("pip", "tinyproj", "1.0")
    env = make_environment(kind="prefix", source="x", packages=[conda, wheel, index])
    rendered = pixiwrite.render({"linux-64": env}, ["https://conda.anaconda.org/conda-forge"], version=7)
    assert [m.split(":")[1].strip() for m in rendered.left_out] == ["pip package tinyproj==1.0"]
    pixi = tmp_path / "pixi.lock"
    pixi.write_text(rendered.text)
    conda_records, pypi = rattler_packages(pixi)
    assert [r.name.normalized for r in conda_records] == ["six"]
    assert conda_records[0].sha256.hex() == "ab" * 32
    assert [(p.name, str(p.version)) for p in pypi] == [("wheelpkg", "2.0")]


def test_pixi_version_needs_the_pixi_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text("channels: [conda-forge]\ndependencies: [six]\n")
    capsys.readouterr()
    assert envguard("lock", "-f", str(yml), "--pixi-version", "7") == 2
    assert "--pixi-version applies to --format pixi" in capsys.readouterr().err
    assert envguard("lock", "-f", str(yml), "--format", "pixi", "--pixi-version", "8") == 2
