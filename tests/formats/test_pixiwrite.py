"""`envguard lock --format pixi`: a pixi.lock (rattler lock v6) that py-rattler reads back, that envguard
reads back as the same packages as the environment and its conda-lock.yml, and that rattler installs into an
environment `envguard check` finds clean against that lock."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from envguard.formats import detect_kind, pixilock, pixiwrite
from envguard.formats.condalock import read as condalock
from envguard.model import Environment, Package, PipOrigin, make_environment
from envguard.prefix.reader import read_prefix
from tests.helpers import MakePrefix, check_out, envguard, pip_install

ENV_YML = """name: pixi
channels:
  - {pytorch}
  - {forge}
dependencies:
  - python=3.11
  - pytorch=2.1=*cuda11.8*
  - six
"""


def _fields(env: Environment, *, build_number: bool = True) -> set[tuple[Any, ...]]:
    """What a lock pins for each package (conda-lock.yml has no build numbers: leave them out to compare)."""
    out = set()
    for p in env.packages:
        number = p.build_number if build_number else None
        depends = tuple(sorted(p.depends))
        out.add(
            (
                p.manager,
                p.name,
                p.version,
                p.build,
                p.channel,
                p.subdir,
                p.url,
                p.md5,
                p.sha256,
                number,
                depends,
            )
        )
    return out


def _rattler_records(path: Path) -> list[Any]:
    """The linux-64 conda records of the default environment, as py-rattler reads them."""
    import rattler

    env = rattler.LockFile.from_path(path).default_environment()
    assert env is not None
    platform = next(p for p in env.platforms() if p.name == "linux-64")
    records = env.conda_repodata_records_for_platform(platform)
    assert records
    return list(records)


@pytest.fixture
def gpu(make_prefix: MakePrefix) -> Path:
    return make_prefix(["python=3.11", "pytorch=2.1=*cuda11.8*", "six"], name="gpu", cuda="12.4")


def test_live_lock_as_pixi_reads_back_through_rattler_and_envguard(gpu: Path, tmp_path: Path) -> None:
    pixi, conda_lock = tmp_path / "pixi.lock", tmp_path / "conda-lock.yml"
    assert envguard("lock", str(gpu), "--no-probe", "--format", "pixi", "-o", str(pixi)) == 0
    assert envguard("lock", str(gpu), "--no-probe", "-o", str(conda_lock)) == 0
    data = yaml.safe_load(pixi.read_text())
    assert data["version"] == 6 and list(data["environments"]) == ["default"]
    assert "# Reproduce: envguard lock" in pixi.read_text() and "--format pixi" in pixi.read_text()
    records = _rattler_records(pixi)
    assert records is not None and {str(r.name.normalized) for r in records} >= {"python", "pytorch", "six"}
    assert detect_kind(pixi) == "pixi-lock"
    ours, live = pixilock.read(pixi, platform="linux-64"), read_prefix(gpu)
    assert _fields(ours) == _fields(live) and len(ours.packages) == len(live.packages) > 3
    assert [p.depends for p in ours.packages] == [p.depends for p in live.packages]  # in conda's order
    assert ours.channels == live.channels
    theirs = condalock.read(conda_lock, platform="linux-64")
    assert _fields(ours, build_number=False) == _fields(theirs, build_number=False)


def test_solved_lock_as_pixi_installs_with_rattler_and_checks_clean(
    channels: dict[str, Path], tmp_path: Path, pkgs_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import rattler

    yml = tmp_path / "environment.yml"
    yml.write_text(ENV_YML.format(pytorch=channels["pytorch"].as_uri(), forge=channels["forge"].as_uri()))
    pixi, conda_lock = tmp_path / "pixi.lock", tmp_path / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--cuda", "12.4", "--format", "pixi", "-o", str(pixi)) == 0
    assert envguard("lock", "-f", str(yml), "--cuda", "12.4", "-o", str(conda_lock)) == 0
    ours, theirs = pixilock.read(pixi, platform="linux-64"), condalock.read(conda_lock, platform="linux-64")
    assert _fields(ours, build_number=False) == _fields(theirs, build_number=False)
    assert ours.channels == theirs.channels
    assert {p.name: p.build_number for p in ours.packages}["cudatoolkit"] == 13
    first = pixi.read_bytes()
    assert envguard("lock", "-f", str(yml), "--cuda", "12.4", "--format", "pixi", "-o", str(pixi)) == 0
    assert pixi.read_bytes() == first, "the same solve writes the same bytes"
    records = _rattler_records(pixi)
    prefix = tmp_path / "from-pixi"
    asyncio.run(rattler.install(records, prefix, cache_dir=pkgs_cache, show_progress=False))
    # no `noarch:` key is written (envguard does not keep it): rattler links from the package's index.json
    assert (prefix / "lib" / "python3.11" / "site-packages" / "six").is_dir()
    code, out = check_out(prefix, pixi, capsys)
    assert code == 0, out
    code, out = check_out(prefix, conda_lock, capsys)
    assert code == 0, out


def test_pip_packages_without_a_file_url_are_left_out_with_a_reason() -> None:
    conda = Package(
        "conda", "six", "1.16.0", "pyh_0", subdir="noarch", url="file:///c/noarch/six-1.16.0-pyh_0.conda"
    )
    index = Package("pip", "tinyproj", "1.0")
    direct = Package(
        "pip", "wheelpkg", "2.0", origin=PipOrigin(url="https://host.example/w-2.0-py3-none-any.whl")
    )
    vcs = Package(
        "pip",
        "gitpkg",
        "2.0",
        origin=PipOrigin(url="https://github.com/org/gitpkg.git", vcs="git", commit_id="0123abc"),
    )
    local = Package("pip", "localpkg", "0.1", origin=PipOrigin(url="file:///home/me/src/localpkg"))
    env = make_environment(kind="prefix", source="x", packages=[conda, index, direct, vcs, local])
    rendered = pixiwrite.render({"linux-64": env}, ["file:///c"])
    assert len(rendered.left_out) == 2
    assert {m.split(":")[1].strip() for m in rendered.left_out} == {
        "pip package tinyproj==1.0",
        "pip package localpkg==0.1",
    }
    assert "/home/me" not in rendered.text
    data = yaml.safe_load(rendered.text)
    refs = data["environments"]["default"]["packages"]["linux-64"]
    assert {"pypi": "git+https://github.com/org/gitpkg.git#0123abc"} in refs
    assert data["environments"]["default"]["indexes"] == [pixiwrite.DEFAULT_INDEX]


def test_several_platforms_share_one_entry_per_url(channels: dict[str, Path], tmp_path: Path) -> None:
    import rattler

    from envguard.prefix.records import rattler_to_package
    from tests.helpers import virtual

    def solved(platform: str, specs: list[str]) -> Environment:
        async def go() -> list[Any]:
            records: list[Any] = await rattler.solve(
                [rattler.Channel(channels["forge"].resolve().as_uri())],
                [rattler.MatchSpec(s) for s in specs],
                platforms=[platform, "noarch"],
                virtual_packages=virtual(None) if platform.startswith("linux") else [],
            )
            return records

        packages = [rattler_to_package(r) for r in asyncio.run(go())]
        return make_environment(kind="conda-lock", source="x", platform=platform, packages=packages)

    envs = {
        "linux-64": solved("linux-64", ["cuda-version=12.1", "zlib"]),
        "osx-arm64": solved("osx-arm64", ["cuda-version=12.1"]),
    }
    text = pixiwrite.render(envs, [channels["forge"].resolve().as_uri()]).text
    data = yaml.safe_load(text)
    urls = [entry["conda"] for entry in data["packages"]]
    assert len(urls) == len(set(urls)) == 2  # cuda-version (noarch) once, zlib
    assert sorted(data["environments"]["default"]["packages"]) == ["linux-64", "osx-arm64"]
    path = tmp_path / "pixi.lock"
    path.write_text(text)
    for platform, env in envs.items():
        assert _fields(pixilock.read(path, platform=platform)) == _fields(env)


@pytest.mark.parametrize("version", ["6", "7"])
def test_the_wrote_line_counts_what_the_lock_holds_not_what_it_left_out(
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    version: str,
) -> None:
    prefix = make_prefix(["python=3.11", "six", "pip"])
    pip_install(prefix, "--find-links", str(channels["wheels"]), "tinyproj==1.0.0")  # an index release
    pixi = tmp_path / "pixi.lock"
    capsys.readouterr()
    args = ["lock", str(prefix), "--no-probe", "--format", "pixi", "--pixi-version", version]
    assert envguard(*args, "-o", str(pixi)) == 0
    err = capsys.readouterr().err
    conda = len(read_prefix(prefix).conda_packages())
    assert f"wrote {pixi}: linux-64 ({conda} conda, 0 pip)" in err, err
    assert "pip package tinyproj==1.0.0" in err  # left out, and said so
