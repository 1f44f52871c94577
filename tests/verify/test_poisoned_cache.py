"""A poisoned package cache (issue 11, S1): verify and create --lock hash the archives, and now also check
the already-extracted folders against them; an edited file makes verify FAIL naming the package and file, and
is never linked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import envguard


def _lock(folder: Path, channel: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    yml = folder / "environment.yml"
    yml.write_text(f"channels:\n  - {channel.resolve().as_uri()}\ndependencies:\n  - zlib\n")
    lock = folder / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock)) == 0
    return lock


def _poison(pkgs: Path) -> Path:
    folder = next(p for p in pkgs.iterdir() if p.is_dir() and p.name.startswith("zlib-"))
    paths = json.loads((folder / "info" / "paths.json").read_text())["paths"]
    victim = folder / paths[0]["_path"]
    victim.write_text("X" * len(victim.read_bytes()))  # same size, different content
    return victim


@pytest.mark.parametrize("same_size", [True, False])
def test_verify_fails_on_an_edited_cache_entry(channels, tmp_path, capsys, same_size) -> None:
    lock = _lock(tmp_path / "proj", channels["forge"])
    pkgs = tmp_path / "pkgs"
    assert envguard("verify", "--lock", str(lock), "--pkgs-dir", str(pkgs)) == 0  # extracts into pkgs
    victim = _poison(pkgs)
    if not same_size:
        victim.write_text("tampered, and longer than before\n" * 3)
    capsys.readouterr()
    code = envguard("verify", "--lock", str(lock), "--pkgs-dir", str(pkgs), "--json")
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["passed"] is False
    install = next(s for s in data["stages"] if s["name"] == "install")
    assert install["status"] == "failed" and "zlib" in install["detail"] and victim.name in install["detail"]
    # the poisoned folder was removed: the next run re-extracts from the verified archive and passes
    assert envguard("verify", "--lock", str(lock), "--pkgs-dir", str(pkgs)) == 0


def test_create_from_a_lock_never_links_the_edited_file(
    channels, tmp_path, isolated_home, monkeypatch
) -> None:
    lock = _lock(tmp_path / "proj", channels["forge"])
    pkgs = tmp_path / "pkgs"
    monkeypatch.setenv("ENVGUARD_PKGS_DIR", str(pkgs))
    assert envguard("create", "--lock", str(lock), "-n", "first") == 0
    victim = _poison(pkgs)
    assert envguard("create", "--lock", str(lock), "-n", "second") == 0
    relative = victim.relative_to(
        next(p for p in pkgs.iterdir() if p.is_dir() and p.name.startswith("zlib-"))
    )
    installed = isolated_home / ".conda" / "envs" / "second" / relative
    assert "XXXX" not in installed.read_text()
