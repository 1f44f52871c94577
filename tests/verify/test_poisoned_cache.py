"""A poisoned package cache (issue 11, S1): verify and create --lock hash the archives, and now also check
the already-extracted folders against them; an edited file makes verify FAIL naming the package and file, and
is never linked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import envguard, zlib_lock


def _poison(pkgs: Path) -> Path:
    folder = next(p for p in pkgs.iterdir() if p.is_dir() and p.name.startswith("zlib-"))
    paths = json.loads((folder / "info" / "paths.json").read_text())["paths"]
    victim = folder / paths[0]["_path"]
    victim.write_text("X" * len(victim.read_bytes()))  # same size, different content
    return victim


@pytest.mark.parametrize("same_size", [True, False])
def test_verify_fails_on_an_edited_cache_entry(channels, tmp_path, capsys, same_size) -> None:
    lock = zlib_lock(tmp_path / "proj", channels["forge"])
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
    lock = zlib_lock(tmp_path / "proj", channels["forge"])
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


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Files of extracted package folders that the cache check hashes (the real digest, counted), with
    files counting as settled at once (the 2 s rule is for coarse clocks)."""
    from envguard.engine import cachecheck

    seen: list[str] = []
    real = cachecheck.file_digest

    def counted(path, algorithm: str = "sha256") -> str:  # type: ignore[no-untyped-def]
        seen.append(str(path))
        return real(path, algorithm)

    monkeypatch.setattr(cachecheck, "file_digest", counted)
    if hasattr(cachecheck, "ProvedFolders"):
        monkeypatch.setattr(cachecheck.ProvedFolders, "FRESH_NS", -(10**12))
    return seen


def test_a_proved_folder_is_not_hashed_again_until_it_changes(channels, tmp_path, hashed) -> None:
    lock = zlib_lock(tmp_path / "proj", channels["forge"])
    pkgs = tmp_path / "pkgs"
    verify = ["verify", "--lock", str(lock), "--pkgs-dir", str(pkgs)]
    assert envguard(*verify) == 0  # extracts into pkgs (nothing there to check yet)
    assert envguard(*verify) == 0 and hashed  # proves the extracted folders, remembers them
    hashed.clear()
    assert envguard(*verify) == 0 and hashed == []  # unchanged: stat only
    victim = _poison(pkgs)  # same size, written in place: a new mtime
    assert envguard(*verify) == 1 and str(victim) in hashed
    assert envguard(*verify) == 0  # re-extracted from the verified archive


def test_a_replaced_file_with_its_old_mtime_or_another_boot_is_hashed(channels, tmp_path, hashed) -> None:
    import os

    from envguard.cache import cache_dir

    lock = zlib_lock(tmp_path / "proj", channels["forge"])
    pkgs = tmp_path / "pkgs"
    verify = ["verify", "--lock", str(lock), "--pkgs-dir", str(pkgs)]
    assert envguard(*verify) == 0 and envguard(*verify) == 0
    [memo] = (cache_dir() / "verified-pkgs").glob("*.json")
    assert oct(memo.stat().st_mode & 0o777) == "0o600"
    data = json.loads(memo.read_text())
    data["header"][3] = "another-boot"
    memo.write_text(json.dumps(data))
    hashed.clear()
    assert envguard(*verify) == 0 and hashed  # a memo from another boot is not trusted
    folder = next(p for p in pkgs.iterdir() if p.is_dir() and p.name.startswith("zlib-"))
    paths = json.loads((folder / "info" / "paths.json").read_text())["paths"]
    victim = folder / paths[0]["_path"]
    before = victim.stat()
    replacement = victim.with_name(victim.name + ".new")
    replacement.write_bytes(b"Y" * before.st_size)
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, victim)  # same size and mtime, another inode
    assert envguard(*verify) == 1
