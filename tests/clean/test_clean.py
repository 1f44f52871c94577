"""`envguard clean` end to end on real rattler-made caches and environments (see test_clean_world for the
layout)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.clean.world import World, age_packages, du, names, tree, verify_environment, world_at
from tests.helpers import envguard, install

ALWAYS_UNUSED = {
    "python-3.12.4-h194c7f8_0_cpython",
    "numpy-2.0.1-py312h1103770_0",
    "requests-2.32.3-pyhd8ed1ab_0",
}


@pytest.fixture
def world(tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with world_at(tmp_path, channels, monkeypatch) as built:
        yield built


def clean_json(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> dict[str, Any]:
    assert envguard("clean", "--json", *argv) == code, capsys.readouterr().err
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1
    return data


def test_dry_run_lists_exactly_what_nothing_uses_and_changes_nothing(world: World, capsys) -> None:
    before = tree(world.root)
    data = clean_json(capsys, *world.all_options())
    assert tree(world.root) == before
    assert data["mode"] == "dry-run" and data["usage_complete"] is True
    assert names(data, "unused-package", world.pkgs) == ALWAYS_UNUSED
    assert names(data, "tarball") == {
        "python-3.11.9-hab00c5b_0_cpython.conda",
        "numpy-2.0.1-py312h1103770_0.conda",
        "zlib-1.2.13-hd590300_5.conda",
    }
    reasons = {Path(i["paths"][0]).name: i["reason"] for i in data["items"] if i["category"] == "tarball"}
    assert reasons["python-3.11.9-hab00c5b_0_cpython.conda"] == "package in use and already extracted"
    assert reasons["numpy-2.0.1-py312h1103770_0.conda"] == "package unused"
    assert names(data, "index-cache") == {"4b2cfd1a.json", "4b2cfd1a.info.json"}
    assert names(data, "partial-download") == {"requests-2.32.3-pyhd8ed1ab_0.conda.partial"}
    assert names(data, "temp-log") == {".logs", ".tmpa1b2c3", "python-3.11.9-hab00c5b_0_cpython.c~"}
    assert data["kept"]["tarball of a package in use, not extracted"] == 1
    assert data["kept"]["recent temporary file (a running download?)"] == 1
    if world.shm_pkgs is not None:
        assert names(data, "unused-package", world.shm_pkgs) == {"python-3.12.4-h194c7f8_0_cpython"}
    origins = {e["origin"] for e in data["environments"]}
    assert {"envs_dirs", "--env", "pixi"} <= origins
    python312 = next(i for i in data["items"] if i["paths"][0].endswith("python-3.12.4-h194c7f8_0_cpython"))
    assert python312["paths"][1].endswith("python-3.12.4-h194c7f8_0_cpython.lock"), (
        "rattler's metadata goes along"
    )


@pytest.mark.parametrize(
    ("left_out", "package"),
    [
        ("--env", "six-1.16.0-pyh6c4a22f_0"),
        ("--pixi-root", "python-3.10.14-hd12c33a_0_cpython"),
        ("--keep-locked", "zlib-1.2.13-hd590300_5"),
    ],
)
def test_each_source_of_usage_protects_its_packages(
    world: World, capsys, left_out: str, package: str
) -> None:
    options = world.all_options()
    at = options.index(left_out)
    del options[at : at + 2]
    assert package in names(clean_json(capsys, *options), "unused-package", world.pkgs)
    assert package not in names(clean_json(capsys, *world.all_options()), "unused-package", world.pkgs)


def test_softlinked_environment_keeps_its_packages_though_link_counts_say_unused(
    world: World, capsys
) -> None:
    data = clean_json(capsys, "--yes", *world.all_options())
    gone = names(data, "unused-package")
    assert not any(n.startswith(("cudatoolkit", "cuda-version", "requests-2.31")) for n in gone)
    assert verify_environment(world.soft) == []


def test_yes_moves_to_trash_breaks_nothing_and_undo_restores(world: World, capsys) -> None:
    before = tree(world.pkgs)
    data = clean_json(capsys, "--yes", *world.all_options())
    assert data["mode"] == "clean" and not data["result"]["failed"]
    moved = {Path(m["from"]) for m in data["result"]["moved"]}
    assert {p for i in data["items"] for p in map(Path, i["paths"])} == moved
    assert not any(p.exists() or p.is_symlink() for p in moved)
    assert all(
        Path(m["to"]).is_relative_to(Path(i["cache"]) / ".envguard-trash")
        for m in data["result"]["moved"]
        for i in data["items"]
        if m["from"] in i["paths"]
    )
    for env in world.environments():
        assert verify_environment(env) == [], env
    assert (world.outside_target / "precious.txt").read_text() == "do not touch\n"
    again = clean_json(capsys, *world.all_options())
    assert names(again, "unused-package") == set(), "a second run finds nothing left to do"
    state = next(c for c in again["caches"] if c["path"] == str(world.pkgs))
    assert state["trash"]["runs"] == [data["result"]["run_id"]] and state["trash"]["disk_bytes"] > 0
    assert envguard("clean", *world.all_options()) == 0
    assert "--purge-trash` frees it" in capsys.readouterr().out
    assert envguard("clean", "--undo") == 0
    assert "Restored" in capsys.readouterr().out
    assert tree(world.pkgs) == before
    assert not (world.pkgs / ".envguard-trash").exists()
    assert envguard("clean", "--undo") == 0
    assert "Nothing to undo" in capsys.readouterr().out


def test_reported_bytes_are_what_du_sees_the_disk_gain(world: World, capsys) -> None:
    disk_before, apparent_before = du(world.root), du(world.root, apparent=True)
    shm_before = du(world.shm_pkgs) if world.shm_pkgs else 0
    data = clean_json(capsys, "--yes", *world.all_options())
    main = [i for i in data["items"] if i["cache"] == str(world.pkgs)]
    assert du(world.root) >= disk_before, "moving to the trash frees nothing yet"
    purge = clean_json(capsys, "--purge-trash")["result"]
    assert not purge["failed"]
    assert disk_before - du(world.root) == sum(i["disk_bytes"] for i in main) > 0
    assert apparent_before - du(world.root, apparent=True) == sum(i["bytes"] for i in main) > 0
    shm_items = [i for i in data["items"] if i["cache"] != str(world.pkgs)]
    assert purge["disk_bytes"] >= sum(i["disk_bytes"] for i in data["items"])
    for env in world.environments():
        assert verify_environment(env) == [], env
    # tmpfs: disk bytes match too (its folders' apparent sizes shrink per entry, so those are not compared)
    if world.shm_pkgs is not None:
        assert shm_before - du(world.shm_pkgs) == sum(i["disk_bytes"] for i in shm_items) > 0


def test_files_hardlinked_elsewhere_free_nothing(world: World, capsys) -> None:
    data = clean_json(capsys, *world.all_options())
    item = next(i for i in data["items"] if Path(i["paths"][0]).name == "requests-2.32.3-pyhd8ed1ab_0")
    assert item["linked_elsewhere"] > 0
    package = Path(item["paths"][0])
    alone = [p for p in package.rglob("*") if p.is_file() and not p.is_symlink() and p.stat().st_nlink == 1]
    dirs = [package, *(p for p in package.rglob("*") if p.is_dir() and not p.is_symlink())]
    expected = sum(p.stat().st_blocks * 512 for p in alone + dirs)
    expected += sum(p.lstat().st_blocks * 512 for p in map(Path, item["paths"][1:]))
    assert item["disk_bytes"] == expected
    clean_json(capsys, "--yes", *world.all_options())
    clean_json(capsys, "--purge-trash")
    assert verify_environment(world.hidden) == [], "an undiscovered hardlinked env keeps its files"


def test_self_hardlinked_package_is_freed_and_counted_once(world: World, capsys) -> None:
    data = clean_json(capsys, *world.all_options())
    item = next(i for i in data["items"] if i["paths"][0] == str(next(world.pkgs.glob("python-3.12.4-*/"))))
    assert (Path(item["paths"][0]) / "bin" / "python3.12").stat().st_nlink == 2
    assert item["linked_elsewhere"] == 0
    assert item["disk_bytes"] == du(*map(Path, item["paths"]))
    assert item["bytes"] == du(*map(Path, item["paths"]), apparent=True)


def test_symlinks_pointing_outside_are_never_followed(world: World, capsys) -> None:
    outside_before = tree(world.outside_target)
    data = clean_json(capsys, "--yes", *world.all_options())
    assert "evil-link" not in {Path(p).name for i in data["items"] for p in i["paths"]}
    assert (world.pkgs / "evil-link").is_symlink()
    clean_json(capsys, "--purge-trash")
    assert tree(world.outside_target) == outside_before
    assert (world.outside_target / "precious.txt").read_text() == "do not touch\n"


def test_only_selects_categories(world: World, capsys) -> None:
    data = clean_json(capsys, "--only", "index-cache", "--yes", *world.all_options())
    assert {i["category"] for i in data["items"]} == {"index-cache"}
    assert not list((world.pkgs / "cache").glob("*.json"))
    assert (world.pkgs / "cache" / "4b2cfd1a.json.lock").exists()
    assert any(world.pkgs.glob("python-3.12.4-*/"))


def test_undo_leaves_what_came_back_meanwhile_in_the_trash(world: World, capsys) -> None:
    data = clean_json(capsys, "--yes", *world.all_options())
    partial = next(Path(i["paths"][0]) for i in data["items"] if i["category"] == "partial-download")
    partial.write_bytes(b"new download")
    assert envguard("clean", "--undo") == 1  # not 0: a script must not take a partial undo for a whole one
    assert "exists again" in capsys.readouterr().out
    assert partial.read_bytes() == b"new download"
    assert any(world.pkgs.glob("python-3.12.4-*/")), "everything else came back"
    assert envguard("clean", "--undo") == 0
    assert "Nothing to undo" in capsys.readouterr().out
    assert clean_json(capsys, "--purge-trash")["result"]["disk_bytes"] > 0
    assert not (world.pkgs / ".envguard-trash").exists()


def test_human_dry_run_is_a_table_by_category(world: World, capsys) -> None:
    assert envguard("clean", *world.all_options()) == 0
    out = capsys.readouterr().out
    for title in (
        "Package caches",
        "What would go",
        "Unused extracted packages",
        "Repodata / index caches",
        "Partial downloads",
        "Logs and temporary files",
        "Dry run:",
    ):
        assert title in out, title
    flat = " ".join(out.split())
    assert "`envguard clean --env " in flat and "--yes` moves them" in flat  # the run's scope, repeated
    assert "python-3.12.4-h194c7f8_0_cpython" in out and "KiB" in out


def test_bad_input_is_exit_2_in_one_line(world: World, tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for argv in (
        ["--cache", str(empty)],
        ["--cache", str(world.hard)],
        ["--cache", str(Path.home())],
        ["--env", str(empty)],
        ["--pixi-root", str(tmp_path / "nope")],
        ["--yes", "--undo"],
        ["--keep-locked", str(tmp_path / "missing.lock")],
    ):
        assert envguard("clean", *argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err


def test_trash_that_is_a_symlink_is_refused(world: World, tmp_path: Path, capsys) -> None:
    elsewhere = tmp_path / "elsewhere-trash"
    elsewhere.mkdir()
    (world.pkgs / ".envguard-trash").symlink_to(elsewhere)
    before = tree(world.pkgs)
    assert envguard("clean", "--yes", "--cache", str(world.pkgs), *world.all_options()) == 3
    assert "symlink" in capsys.readouterr().err
    assert tree(world.pkgs) == before and not any(elsewhere.iterdir())


def test_nothing_outside_the_caches_changes(world: World, capsys) -> None:
    outside = {
        p: tree(p)
        for p in (world.envs_dir, world.outside, world.pixi_root, world.hidden, world.outside_target)
    }
    clean_json(capsys, "--yes", *world.all_options())
    clean_json(capsys, "--purge-trash")
    assert {p: tree(p) for p in outside} == outside
    assert os.path.exists(world.lock)


CONDA_LOCK = """\
version: 1
metadata:
  content_hash: {{linux-64: x, osx-arm64: y}}
  channels: [{{url: {channel}, used_env_vars: []}}]
  platforms: [linux-64, osx-arm64]
  sources: [environment.yml]
package:
- name: zlib
  version: 1.2.13
  manager: conda
  platform: linux-64
  dependencies: {{}}
  url: {zlib}
  hash: {{md5: '{zlib_md5}', sha256: '{zlib_sha}'}}
  category: main
  optional: false
- name: cuda-version
  version: '11.8'
  manager: conda
  platform: osx-arm64
  dependencies: {{}}
  url: {cuda}
  hash: {{md5: '{cuda_md5}', sha256: '{cuda_sha}'}}
  category: main
  optional: false
"""


def _small_cache(tmp_path: Path, channels: dict[str, Path], specs: list[str]) -> Path:
    pkgs = tmp_path / "pkgs"
    for n, spec in enumerate(specs):
        shutil.rmtree(install(tmp_path / f"gone{n}", [spec], [channels["forge"]], cache=pkgs))
    age_packages(pkgs)
    return pkgs


def test_keep_locked_reads_every_platform_of_a_conda_lock(
    tmp_path: Path, channels: dict[str, Path], capsys
) -> None:
    pkgs = _small_cache(tmp_path, channels, ["zlib=1.2.13", "cuda-version=11.8", "six"])
    forge = channels["forge"]
    lock = tmp_path / "conda-lock.yml"
    fields: dict[str, str] = {"channel": forge.resolve().as_uri()}
    for key, pattern in (
        ("zlib", "linux-64/zlib-1.2.13-*.conda"),
        ("cuda", "noarch/cuda-version-11.8-*.conda"),
    ):
        tarball = next(forge.glob(pattern))
        fields[key] = tarball.resolve().as_uri()
        fields[f"{key}_md5"] = hashlib.md5(tarball.read_bytes()).hexdigest()
        fields[f"{key}_sha"] = hashlib.sha256(tarball.read_bytes()).hexdigest()
    lock.write_text(CONDA_LOCK.format(**fields))
    data = clean_json(capsys, "--cache", str(pkgs), "--keep-locked", str(lock))
    assert names(data, "unused-package") == {
        "six-1.16.0-pyh6c4a22f_0",
        "python-3.12.4-h194c7f8_0_cpython",
        "zlib-1.3.1-h4ab18f5_1",
    }, "zlib 1.2.13 and cuda-version (osx) stay"
    assert data["keep_locked"] == [str(lock)]


def test_keep_locked_reads_every_environment_of_a_pixi_lock(
    tmp_path: Path, channels: dict[str, Path], capsys
) -> None:
    import asyncio

    import rattler

    from tests.helpers import virtual

    pkgs = _small_cache(tmp_path, channels, ["zlib=1.2.13", "python=3.12", "six"])
    linux = rattler.LockPlatform("linux-64")
    lock = rattler.LockFile([linux])
    for env, spec in (("default", "zlib=1.2.13"), ("py312", "python=3.12")):
        records = asyncio.run(
            rattler.solve(
                [rattler.Channel(channels["forge"].resolve().as_uri())],
                [rattler.MatchSpec(spec)],
                platforms=["linux-64", "noarch"],
                virtual_packages=virtual(),
            )
        )
        for record in records:
            lock.add_conda_package(env, linux, record)
    path = tmp_path / "pixi.lock"
    lock.to_path(path)
    data = clean_json(capsys, "--cache", str(pkgs), "--keep-locked", str(path))
    assert {n.split("-")[0] for n in names(data, "unused-package")} == {"six"}


@pytest.mark.parametrize("gone", ["folder", "conda-meta"])
def test_a_registered_env_that_is_gone_keeps_what_it_might_use(world: World, gone: str, capsys) -> None:
    """W8 end to end: a registered environment whose folder or conda-meta is missing makes the usage
    unknown; a real clean (dry run and --yes) keeps every package and tarball and says why; `~` in
    environments.txt is expanded. Once it is unregistered, the same packages are removed."""
    registry = Path.home() / ".conda" / "environments.txt"
    registry.parent.mkdir(parents=True, exist_ok=True)
    if gone == "folder":
        line, missing = "~/envs/deleted", Path.home() / "envs" / "deleted"
        why = "registered but its folder is missing"
    else:
        shutil.rmtree(world.hidden / "conda-meta")
        line, missing, why = str(world.hidden), world.hidden / "conda-meta", "missing (a half-deleted"
    registry.write_text(f"{world.hard}\n{line}\n", encoding="utf-8")
    unused = sorted(world.pkgs.glob("python-3.12.4-*/"))
    assert unused, "the world has a package no environment uses"
    assert envguard("clean") == 0
    out = capsys.readouterr().out
    assert "an environment's usage is unknown" in " ".join(out.split())
    data = clean_json(capsys, "--yes")
    assert data["usage_complete"] is False
    assert any(p.startswith(f"{missing}: ") and why in p for p in data["problems"]), data["problems"]
    removed = {
        (i["category"], i["reason"]) for i in data["items"] if i["category"] in ("unused-package", "tarball")
    }
    assert removed <= {("tarball", "package in use and already extracted")}, removed
    assert all(p.is_dir() for p in unused), "nothing it might use was removed"
    registry.write_text(f"{world.hard}\n", encoding="utf-8")
    data = clean_json(capsys, "--yes")
    assert data["usage_complete"] is True
    assert not any(p.exists() for p in unused)


def test_no_cache_found_is_one_line_not_empty_tables(capsys) -> None:
    """Issue 43: with no package cache, clean printed a headline and two empty tables."""
    capsys.readouterr()
    assert envguard("clean") == 0
    out = capsys.readouterr().out
    assert out.startswith("No package cache found") and out.count("\n") == 1, out
