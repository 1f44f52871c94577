"""pixi.lock through py-rattler: locks written by rattler from real solves, plus pixi's own v5 and v7
files."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from envguard.errors import BadInputError
from envguard.formats import detect_kind, pixilock, read_file
from envguard.machine.platform import current_platform
from tests.helpers import envguard, virtual


def _solve(channels: list[Path], specs: list[str], platform: str, cuda: str | None = None) -> list[Any]:
    import rattler

    async def go() -> list[Any]:
        records: list[Any] = await rattler.solve(
            [rattler.Channel(c.resolve().as_uri()) for c in channels],
            [rattler.MatchSpec(s) for s in specs],
            platforms=[platform, "noarch"],
            virtual_packages=virtual(cuda) if platform.startswith("linux") else [],
        )
        return records

    return asyncio.run(go())


@pytest.fixture
def lock_path(tmp_path: Path, channels: dict[str, Path]) -> tuple[Path, list[Any]]:
    """A v7 pixi.lock: env `default` (CUDA torch + pypi packages) and env `cpu`, on linux-64 and osx-arm64."""
    import rattler
    from rattler import LockChannel, LockFile, LockPlatform

    forge, torch = channels["forge"], channels["pytorch"]
    linux = LockPlatform("linux-64", virtual_packages=["__cuda=12.4", "__glibc=2.36=0", "__unix=0=0"])
    osx = LockPlatform("osx-arm64")
    lock = LockFile([linux, osx])
    cuda = _solve([forge, torch], ["python=3.11", "pytorch=2.1=*cuda11.8*", "pip"], "linux-64", cuda="12.4")
    cpu = _solve([forge, torch], ["python=3.11", "pytorch=2.1", "cpuonly"], "linux-64")
    noarch = _solve([forge], ["cuda-version=12.1"], "osx-arm64")
    secret = forge.resolve().as_uri().replace("file://", "https://user:pw@example.org/t/tok-1")
    lock.set_channels("default", [LockChannel(secret), LockChannel(torch.resolve().as_uri())])
    for record in cuda:
        lock.add_conda_package("default", linux, record)
    for record in noarch:
        lock.add_conda_package("default", osx, record)
    for record in cpu:
        lock.add_conda_package("cpu", linux, record)
    files = "https://files.pythonhosted.org/packages/aa/bb/tinyproj-1.0.0-py3-none-any.whl"
    lock.add_pypi_package("default", linux, "TinyProj", "1.0.0", files)
    lock.add_pypi_package("default", linux, "localpkg", "0.1.0", "./src/localpkg")
    lock.add_pypi_package(
        "default", linux, "gitpkg", "2.0", "git+https://github.com/org/gitpkg.git?rev=main#0123abc"
    )
    path = tmp_path / "pixi.lock"
    lock.to_path(path)
    assert isinstance(rattler.LockFile.from_path(path), LockFile)
    return path, cuda


def test_reads_default_environment_for_this_platform(lock_path: tuple[Path, list[Any]]) -> None:
    path, solved = lock_path
    assert detect_kind(path) == "pixi-lock"
    env = read_file(path)
    assert current_platform() == "linux-64" and env.platform == "linux-64"
    assert env.kind == "pixi-lock" and env.name == "default" and env.python == "3.11.9"
    conda = {p.name: p for p in env.conda_packages()}
    assert set(conda) == {r.name.normalized for r in solved}
    for record in solved:
        package = conda[record.name.normalized]
        assert (package.version, package.build, package.build_number) == (
            str(record.version),
            str(record.build),
            record.build_number,
        )
        assert package.sha256 == record.sha256.hex() and package.md5 == record.md5.hex()
        assert package.url == str(record.url) and package.depends == tuple(record.depends)
    assert env.cuda.torch_build == "cuda" and env.cuda.driver == "12.4"
    assert [(v.name, v.version) for v in env.virtual_packages] == [
        ("__cuda", "12.4"),
        ("__glibc", "2.36"),
        ("__unix", "0"),
    ]
    assert (
        env.channels[1].endswith("/pytorch")
        and "pw" not in env.channels[0]
        and "tok-1" not in env.channels[0]
    )


def test_pypi_packages_become_pip_with_origins(lock_path: tuple[Path, list[Any]]) -> None:
    env = pixilock.read(lock_path[0], platform="linux-64")
    pip = {p.name: p for p in env.pip_packages()}
    assert set(pip) == {"tinyproj", "localpkg", "gitpkg"}
    assert pip["tinyproj"].version == "1.0.0" and pip["tinyproj"].origin is None
    local = pip["localpkg"].origin
    assert local is not None and local.url == "./src/localpkg"
    git = pip["gitpkg"].origin
    assert git is not None and (git.vcs, git.url, git.commit_id, git.requested_revision) == (
        "git",
        "https://github.com/org/gitpkg.git",
        "0123abc",
        "main",
    )


def test_other_environment_and_platform(lock_path: tuple[Path, list[Any]]) -> None:
    path = lock_path[0]
    cpu = pixilock.read(path, environment="cpu")
    assert cpu.name == "cpu" and cpu.cuda.torch_build == "cpu" and not cpu.pip_packages()
    osx = pixilock.read(path, platform="osx-arm64")
    assert osx.platform == "osx-arm64" and [p.name for p in osx.packages] == ["cuda-version"]
    assert osx.virtual_packages == ()


def test_missing_platform_names_the_ones_it_has(lock_path: tuple[Path, list[Any]], capsys: Any) -> None:
    path = lock_path[0]
    with pytest.raises(
        BadInputError, match=r"no packages for platform win-64; the lock has linux-64, osx-arm64"
    ):
        pixilock.read(path, platform="win-64")
    with pytest.raises(BadInputError, match=r"no environment 'gpu' .*\(it has: cpu, default\)"):
        pixilock.read(path, environment="gpu")
    assert envguard("snapshot", str(path), "--no-probe", "--platform", "win-64") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "linux-64, osx-arm64" in err


def test_corrupt_lock_is_one_line_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "pixi.lock"
    path.write_text("version: 6\nenvironments:\n  default:\n    channels: [oops\n")
    with pytest.raises(BadInputError, match=r"pixi\.lock: not a readable pixi\.lock") as info:
        pixilock.read(path)
    assert "\n" not in str(info.value)
    with pytest.raises(BadInputError, match="no such file"):
        pixilock.read(tmp_path / "absent.lock")


@pytest.mark.parametrize(
    ("name", "version", "platforms"),
    [
        ("prefix-dev__pixi__examples_lightgbm_pixi.lock", 5, ["linux-64", "osx-64", "osx-arm64", "win-64"]),
        ("43ravens__NEMO_Nowcast__pixi.lock", 7, ["linux-64", "osx-64"]),
    ],
)
def test_pixi_written_locks(shared: Path, name: str, version: int, platforms: list[str]) -> None:
    path = shared / "corpus/pixi_lock" / name
    assert path.read_text().startswith(f"version: {version}\n")
    for platform in platforms:
        env = pixilock.read(path, platform=platform)
        assert env.platform == platform and env.python is not None
        assert all(p.url.startswith("https://conda.anaconda.org/conda-forge/") for p in env.conda_packages())
        assert all(len(p.sha256) == 64 for p in env.conda_packages())
        assert {p.subdir for p in env.conda_packages()} <= {platform, "noarch"}


def test_v7_named_environments(shared: Path) -> None:
    path = shared / "corpus/pixi_lock/43ravens__NEMO_Nowcast__pixi.lock"
    default = pixilock.read(path, platform="linux-64")
    docs = pixilock.read(path, platform="linux-64", environment="docs")
    assert default.get("python") is not None and docs.get("python") is not None
    assert {p.name for p in docs.packages} != {p.name for p in default.packages}
    editable = default.get("nemo-nowcast", "pip")
    assert editable is not None and editable.origin is not None and editable.origin.url == "."
    assert any("no fixed version" in w for w in default.warnings)
