"""Finding caches and environments: `conda/mamba/micromamba info --json` (replayed from real recorded outputs
— no conda exists here), condarc/CONDA_PKGS_DIRS, the rattler/pixi cache, environments.txt, envs dirs, pixi
projects, and what counts as a package cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from envguard.clean.discovery import discover_environments, pixi_environments, recognise
from envguard.clean.model import Cache
from envguard.errors import BadInputError
from envguard.prefix.condaconfig import parse_info
from tests.clean.world import age_packages
from tests.helpers import envguard, install

CORPUS = "corpus/conda_info/conda__conda-lock__tests_test-get-pkgs-dirs_"


def _load(shared: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((shared / name).read_text())
    return data


@pytest.mark.parametrize(
    ("name", "tool", "pkgs", "envs_dirs", "root"),
    [
        (
            "conda-info.json",
            "conda",
            ["/home/runner/conda_pkgs_dir"],
            ["/home/runner/miniconda3/envs", "/home/runner/.conda/envs"],
            "/home/runner/miniconda3",
        ),
        (
            "mamba-info.json",
            "mamba",
            ["/home/runner/conda_pkgs_dir"],
            ["/home/runner/miniconda3/envs/esmvaltool-fromlock/envs"],
            "/home/runner/miniconda3/envs/esmvaltool-fromlock",
        ),
        (
            "micromamba-1.4.5-info.json",
            "micromamba",
            ["/home/user/micromamba/pkgs"],
            ["/home/user/micromamba/envs"],
            "/home/user/micromamba",
        ),
        (
            "micromamba-1.4.6-info.json",
            "micromamba",
            ["/home/user/micromamba/pkgs", "/home/user/.mamba/pkgs"],
            ["/home/user/micromamba/envs"],
            "/home/user/micromamba",
        ),
    ],
)
def test_parse_info_reads_all_recorded_schemas(
    shared: Path, name: str, tool: str, pkgs: list[str], envs_dirs: list[str], root: str
) -> None:
    info = parse_info(_load(shared, CORPUS + name))
    assert (info.tool, list(info.pkgs_dirs), list(info.envs_dirs), info.root_prefix) == (
        tool,
        pkgs,
        envs_dirs,
        root,
    )


def test_parse_info_conda_26_and_unknown(shared: Path) -> None:
    info = parse_info(_load(shared, "reference/conda-outputs/info.json"))
    assert info.pkgs_dirs == ("/home/user/miniconda3/pkgs",) and info.envs == ("/home/user/miniconda3",)
    with pytest.raises(BadInputError, match="pkgs_dirs"):
        parse_info({"platform": "linux-64"})


def _fake_tool(
    tmp_path: Path, name: str, output: str, monkeypatch: pytest.MonkeyPatch, code: int = 0
) -> None:
    """A `conda`/`micromamba` on PATH that replays a recorded `info --json` output."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "recorded.json").write_text(output)
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\ncat "{bin_dir / "recorded.json"}"\nexit {code}\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")


def test_conda_info_on_path_finds_its_caches_and_envs(
    shared: Path, tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    recorded = _load(shared, CORPUS + "conda-info.json")
    pkgs = tmp_path / "conda_pkgs_dir"
    env = install(
        tmp_path / "miniconda3" / "envs" / "esmvaltool-fromlock",
        ["zlib=1.3.1"],
        [channels["forge"]],
        cache=pkgs,
    )
    shutil.rmtree(install(tmp_path / "gone", ["python=3.12"], [channels["forge"]], cache=pkgs))
    age_packages(pkgs)
    replay = json.dumps(recorded).replace("/home/runner", str(tmp_path))
    _fake_tool(tmp_path, "conda", replay, monkeypatch)
    assert envguard("clean", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["path"], c["origin"]) for c in data["caches"]] == [(str(pkgs), "conda info")]
    assert {"prefix": str(env), "origin": "conda info"} in data["environments"]
    gone = {Path(i["paths"][0]).name for i in data["items"] if i["category"] == "unused-package"}
    assert gone == {"python-3.12.4-h194c7f8_0_cpython"}


def test_micromamba_info_schema_on_path(
    shared: Path, tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    recorded = _load(shared, CORPUS + "micromamba-1.4.6-info.json")
    pkgs = tmp_path / "micromamba" / "pkgs"
    install(tmp_path / "micromamba" / "envs" / "work", ["zlib=1.3.1"], [channels["forge"]], cache=pkgs)
    _fake_tool(tmp_path, "micromamba", json.dumps(recorded).replace("/home/user", str(tmp_path)), monkeypatch)
    assert envguard("clean", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["path"], c["origin"]) for c in data["caches"]] == [(str(pkgs), "micromamba info")]
    assert {"prefix": str(tmp_path / "micromamba" / "envs" / "work"), "origin": "micromamba info"} in data[
        "environments"
    ]


def test_failing_conda_info_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    _fake_tool(tmp_path, "conda", "Traceback: boom", monkeypatch, code=1)
    assert envguard("clean", "--json") == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("info --json` exited 1" in n for n in notes)


def test_rattler_cache_root_with_repodata(
    tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    root = tmp_path / "rattler-cache"
    shutil.rmtree(install(tmp_path / "gone", ["zlib=1.3.1"], [channels["forge"]], cache=root / "pkgs"))
    age_packages(root / "pkgs")
    (root / "repodata").mkdir()
    (root / "repodata" / "1a2b.json").write_text('{"packages": {}}')
    (root / "repodata" / "1a2b.info.json").write_text("{}")
    (root / "repodata" / "1a2b.lock").write_text("")
    monkeypatch.setenv("RATTLER_CACHE_DIR", str(root))
    assert envguard("clean", "--json", "--yes") == 0
    data = json.loads(capsys.readouterr().out)
    [cache] = data["caches"]
    assert (cache["path"], cache["pkgs"], cache["kind"], cache["origin"]) == (
        str(root),
        str(root / "pkgs"),
        "rattler",
        "RATTLER_CACHE_DIR",
    )
    moved = {Path(m["to"]).relative_to(root / ".envguard-trash") for m in data["result"]["moved"]}
    assert {Path(*p.parts[2:]) for p in moved} >= {
        Path("repodata/1a2b.json"),
        Path("pkgs/zlib-1.3.1-h4ab18f5_1"),
    }
    assert (root / "repodata" / "1a2b.lock").exists()
    assert envguard("clean", "--undo") == 0
    assert (root / "repodata" / "1a2b.json").exists() and (root / "pkgs" / "zlib-1.3.1-h4ab18f5_1").is_dir()


def test_default_rattler_and_pixi_cache_locations(
    tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    default = Path.home() / ".cache" / "rattler" / "cache"
    pixi = tmp_path / "pixi-cache"
    for root in (default, pixi):
        install(tmp_path / f"env-{root.name}", ["zlib=1.3.1"], [channels["forge"]], cache=root / "pkgs")
    monkeypatch.setenv("PIXI_CACHE_DIR", str(pixi))
    assert envguard("clean", "--json") == 0
    caches = {(c["path"], c["origin"]) for c in json.loads(capsys.readouterr().out)["caches"]}
    assert caches == {(str(default), "rattler"), (str(pixi), "PIXI_CACHE_DIR")}


def test_condarc_pkgs_dirs(tmp_path: Path, channels: dict[str, Path], capsys) -> None:
    pkgs = tmp_path / "from-condarc"
    install(tmp_path / "env", ["zlib=1.3.1"], [channels["forge"]], cache=pkgs)
    (Path.home() / ".condarc").write_text(f"pkgs_dirs:\n  - {pkgs}\n")
    assert envguard("clean", "--json") == 0
    assert [c["path"] for c in json.loads(capsys.readouterr().out)["caches"]] == [str(pkgs)]


def test_what_counts_as_a_package_cache(tmp_path: Path, channels: dict[str, Path]) -> None:
    marker = tmp_path / "conda-pkgs"
    marker.mkdir()
    (marker / "urls.txt").write_text("")
    tagged = tmp_path / "tagged"
    tagged.mkdir()
    (tagged / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    (tagged / "zlib-1.3.1-h0_1.conda").write_bytes(b"")  # CACHEDIR.TAG and a package archive
    extracted = tmp_path / "extracted"
    (extracted / "zlib-1.3.1-h0_1" / "info").mkdir(parents=True)
    (extracted / "zlib-1.3.1-h0_1" / "info" / "index.json").write_text("{}")
    for folder in (marker, tagged, extracted):
        found = recognise(folder, "test")
        assert isinstance(found, Cache) and found.kind == "conda" and found.pkgs == folder
    channel_subdir = channels["forge"] / "linux-64"  # tarballs and repodata, but a channel is not a cache
    env = install(tmp_path / "env", ["zlib=1.3.1"], [channels["forge"]], cache=tmp_path / "pkgs")
    empty = tmp_path / "empty"
    empty.mkdir()
    other_tool = tmp_path / "pip-cache"  # W9: any tool writes CACHEDIR.TAG; alone it is not a package cache
    (other_tool / "http").mkdir(parents=True)
    (other_tool / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    for folder, reason in (
        (other_tool, "no urls.txt"),
        (channel_subdir, "no urls.txt"),
        (env, "conda environment"),
        (empty, "no urls.txt"),
        (Path.home(), "home folder"),
        (Path("/"), "root"),
        (tmp_path / "missing", "not a folder"),
    ):
        found = recognise(folder, "test")
        assert isinstance(found, str) and reason in found, (folder, found)


def test_environments_from_environments_txt_envs_dirs_and_pixi(
    tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    forge, cache = [channels["forge"]], tmp_path / "pkgs"
    registered = install(tmp_path / "registered", ["zlib=1.3.1"], forge, cache=cache)
    (Path.home() / ".conda").mkdir()
    (Path.home() / ".conda" / "environments.txt").write_text(
        f"{registered}\n{tmp_path / 'deleted-env'}\n~/envs/on-home\n"
    )
    envs_dir = tmp_path / "envs"
    named = install(envs_dir / "named", ["zlib=1.3.1"], forge, cache=cache)
    monkeypatch.setenv("CONDA_ENVS_DIRS", str(envs_dir))
    projects = tmp_path / "work"
    deep = install(
        projects / "a" / "b" / "proj" / ".pixi" / "envs" / "cuda", ["zlib=1.3.1"], forge, cache=cache
    )
    too_deep = projects / "a" / "b" / "c" / "d" / "proj"
    install(too_deep / ".pixi" / "envs" / "default", ["zlib=1.3.1"], forge, cache=cache)
    found, notes = discover_environments([], [projects], None)
    assert {(e.prefix, e.origin) for e in found} == {
        (registered, "environments.txt"),
        # W8: a registered env whose folder is gone is kept (its usage is unknown) and `~` is expanded
        (tmp_path / "deleted-env", "environments.txt"),
        (Path.home() / "envs" / "on-home", "environments.txt"),
        (named, "envs_dirs"),
        (deep, "pixi"),
    }
    from envguard.clean.usage import environment_references

    assert environment_references(tmp_path / "deleted-env")[3] is False  # usage unknown: nothing is removed
    assert pixi_environments(too_deep) == [too_deep / ".pixi" / "envs" / "default"]
    _, notes = discover_environments([], [tmp_path / "registered"], None)
    assert any("no .pixi/envs" in n for n in notes)
