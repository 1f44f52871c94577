"""The clean world really is what the clean tests rely on: link types 1/2/3, link counts, the traps."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.clean.world import World, du, verify_environment


def _link_types(prefix: Path) -> set[int]:
    return {json.loads(p.read_text())["link"]["type"] for p in (prefix / "conda-meta").glob("*.json")}


def test_world_has_the_three_link_types(world: World) -> None:
    assert _link_types(world.hard) == {1}
    assert _link_types(world.soft) == {2}
    if world.copied is None:
        pytest.skip("no second filesystem (/dev/shm) for a copied environment")
    assert _link_types(world.copied) == {3}
    python = next(world.copied.glob("bin/python3.11"))
    assert python.stat().st_nlink == 1 and not python.is_symlink()


def test_softlinked_packages_look_unused_by_link_count(world: World) -> None:
    """The trap conda clean falls into: every cache file of a softlinked-only package has one link."""
    cudatoolkit = next(p for p in world.pkgs.glob("cudatoolkit-*") if p.is_dir())
    files = [p for p in cudatoolkit.rglob("*") if p.is_file() and "info" not in p.parts]
    assert files and all(p.stat().st_nlink == 1 for p in files)
    assert any(p.is_symlink() for p in world.soft.rglob("*"))
    aside = world.root / "aside"
    cudatoolkit.rename(aside)  # what a link-count clean does to it
    try:
        broken = verify_environment(
            world.soft
        )  # (envguard.prefix.integrity alone accepts a dangling softlink: lexists)
        assert any("cudatoolkit" in p and "No such file" in p for p in broken)
    finally:
        aside.rename(cudatoolkit)
    for env in world.environments():
        assert verify_environment(env) == [], env


def test_hidden_environment_shares_inodes_with_an_unreferenced_package(world: World) -> None:
    requests = next(p for p in world.pkgs.glob("requests-2.32.3-*") if p.is_dir())
    linked = [p for p in requests.rglob("*") if p.is_file() and p.stat().st_nlink > 1]
    assert linked, "rattler hardlinks cache files into the environment"


def test_helpers_are_honest(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a").write_bytes(b"x" * 10000)
    before = du(folder, apparent=True)
    os.link(folder / "a", folder / "b")
    assert du(folder, apparent=True) == before, "du counts a hardlinked inode once"
