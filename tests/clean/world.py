"""A realistic cache-and-environments layout for `envguard clean`, built with real py-rattler installs, and
tests that the layout really is what the clean tests rely on (link types 1/2/3, link counts, the traps).

Layout (all under one tmp folder, plus a second cache on another filesystem when one exists):
- `pkgs/`: a conda-style package cache (rattler extracts into it; urls.txt, tarballs, `cache/` index, a
  partial
  download, `.logs/`, a `.tmp*` folder, a `.c~` file, a symlink pointing outside, an unreadable-file hook)
- envs dir `conda/envs/`: `hard` (hardlinked, link.type 1), `soft` (softlinked the way conda's always_softlink
  lays it out, link.type 2), `copied` (cache on another filesystem: rattler copies, link.type 3)
- `elsewhere/proj-env`: an environment outside every envs dir (found only with --env)
- `projects/proj1/.pixi/envs/default`: a pixi environment (found only with --pixi-root)
- `hidden-env`: an environment nobody registers; its files are hardlinks of a package nothing else uses
- `rollback.txt`: an explicit spec naming zlib 1.2.13, a package only that lock references
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import install

OLD = time.time() - 7 * 86400


@dataclass
class World:
    root: Path
    pkgs: Path
    envs_dir: Path
    hard: Path
    soft: Path
    outside: Path
    pixi_root: Path
    pixi_env: Path
    hidden: Path
    lock: Path
    outside_target: Path
    shm_pkgs: Path | None
    copied: Path | None

    def environments(self) -> list[Path]:
        found = [self.hard, self.soft, self.outside, self.pixi_env, self.hidden]
        return found + ([self.copied] if self.copied else [])

    def all_options(self) -> list[str]:
        return [
            "--env",
            str(self.outside),
            "--pixi-root",
            str(self.pixi_root),
            "--keep-locked",
            str(self.lock),
        ]


def _channel_file(channel: Path, name: str) -> Path:
    found = [p for sub in ("linux-64", "noarch") for p in (channel / sub).glob(f"{name}*.conda")]
    assert len(found) == 1, (name, found)
    return found[0]


def softlink_environment(prefix: Path) -> None:
    """Lay out an installed environment the way conda's always_softlink does: each file linked from the cache
    becomes a symlink to the cache file, and each record says link.type 2."""
    for record_path in sorted((prefix / "conda-meta").glob("*.json")):
        record = json.loads(record_path.read_text())
        source = Path(record["link"]["source"])
        for entry in record["paths_data"]["paths"]:
            target = prefix / entry["_path"]
            origin = _cache_file(source, entry["_path"])
            if origin is None or not target.is_file() or not os.path.samefile(origin, target):
                continue
            target.unlink()
            target.symlink_to(origin)
            entry["path_type"] = "softlink"
        record["link"]["type"] = 2
        record_path.write_text(json.dumps(record, indent=2))


def _cache_file(source: Path, rel: str) -> Path | None:
    direct = source / rel
    if direct.is_file():
        return direct
    parts = Path(rel).parts
    if (
        len(parts) > 3 and parts[0] == "lib" and parts[2] == "site-packages"
    ):  # noarch: python, placed by version
        moved = source.joinpath(*parts[2:])
        return moved if moved.is_file() else None
    return None


def verify_environment(prefix: Path) -> list[str]:
    """What `envguard check --files` reports (envguard.prefix.integrity), plus an independent re-check here:
    every file every record lists exists (through symlinks) with its recorded sha256."""
    from envguard.prefix.integrity import verify_files

    report = verify_files(prefix)
    problems = [f"{p.path}: {p.problem} ({p.detail})" for p in report.problems]
    assert report.files > 0
    for record_path in sorted((prefix / "conda-meta").glob("*.json")):
        record = json.loads(record_path.read_text())
        for entry in record.get("paths_data", {}).get("paths", []):
            path = prefix / entry["_path"]
            expected = entry.get("sha256_in_prefix") or entry.get("sha256")
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError as exc:
                problems.append(f"{path}: {exc.strerror}")
                continue
            if expected and digest != expected:
                problems.append(f"{path}: sha256 differs")
    return problems


def tree(folder: Path) -> dict[str, tuple[str, str]]:
    """relative path -> (kind, content digest or link target), never following symlinks."""
    result: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                result[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                result[rel] = ("dir", "")
            else:
                result[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    return result


def du(*paths: Path, apparent: bool = False) -> int:
    """Real `du`: bytes used by `paths` together (each inode once), apparent or on disk."""
    args = ["du", "-s", "-c", "-b" if apparent else "-B1", *map(str, paths)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1].split()[0])


def _other_filesystem(near: Path) -> Path | None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK) or os.stat(shm).st_dev == os.stat(near).st_dev:
        return None
    return Path(tempfile.mkdtemp(prefix="envguard-clean-", dir=shm))


def build_world(tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> World:
    forge = [channels["forge"]]
    root = tmp_path / "w"
    pkgs = root / "pkgs"
    envs_dir = root / "conda" / "envs"
    envs_dir.mkdir(parents=True)
    hard = install(envs_dir / "hard", ["python=3.11", "numpy=1.26", "zlib=1.3.1", "pip"], forge, cache=pkgs)
    soft = install(envs_dir / "soft", ["python=3.11", "cudatoolkit=11.8", "requests=2.31"], forge, cache=pkgs)
    softlink_environment(soft)
    shutil.rmtree(install(root / "old", ["python=3.12", "numpy=2.0"], forge, cache=pkgs))
    shutil.rmtree(install(root / "was-locked", ["zlib=1.2.13"], forge, cache=pkgs))
    outside = install(root / "elsewhere" / "proj-env", ["python=3.11", "six"], forge, cache=pkgs)
    pixi_root = root / "projects"
    pixi_env = install(pixi_root / "proj1" / ".pixi" / "envs" / "default", ["python=3.10"], forge, cache=pkgs)
    hidden = install(root / "hidden-env", ["python=3.11", "requests=2.32.3"], forge, cache=pkgs)
    _conda_leftovers(pkgs, channels["forge"])
    lock = root / "rollback.txt"
    zlib = _channel_file(channels["forge"], "zlib-1.2.13")
    lock.write_text(f"# platform: linux-64\n@EXPLICIT\n{zlib.resolve().as_uri()}\n")
    target = root / "outside-target"
    target.mkdir()
    (target / "precious.txt").write_text("do not touch\n")
    _traps(pkgs, target)
    shm_pkgs = _other_filesystem(tmp_path)
    copied = None
    if shm_pkgs is not None:
        shm_pkgs = shm_pkgs / "pkgs"
        copied = install(envs_dir / "copied", ["python=3.11", "zlib=1.3.1"], forge, cache=shm_pkgs)
        shutil.rmtree(install(root / "old-copied", ["python=3.12"], forge, cache=shm_pkgs))
    for cache in (pkgs, shm_pkgs):
        if cache is not None:
            age_packages(cache)
    caches = [str(pkgs), *([str(shm_pkgs)] if shm_pkgs else [])]
    monkeypatch.setenv("CONDA_PKGS_DIRS", ",".join(caches))
    monkeypatch.setenv("CONDA_ENVS_DIRS", str(envs_dir))
    return World(
        root, pkgs, envs_dir, hard, soft, outside, pixi_root, pixi_env, hidden, lock, target, shm_pkgs, copied
    )


def _conda_leftovers(pkgs: Path, forge: Path) -> None:
    """What a conda-managed cache also holds: tarballs, urls.txt, an index cache, downloads and logs."""
    pip_dir = next(p for p in pkgs.glob("pip-24.0-*") if p.is_dir())
    shutil.rmtree(
        pip_dir
    )  # extracted copy gone (conda clean -p did it); the tarball below is all that is left
    (pkgs / f"{pip_dir.name}.lock").unlink(missing_ok=True)
    urls = []
    for name in ("python-3.11.9", "numpy-2.0.1-py312", "pip-24.0", "zlib-1.2.13"):
        tarball = _channel_file(forge, name)
        shutil.copy2(tarball, pkgs / tarball.name)
        urls.append(tarball.resolve().as_uri())
    (pkgs / "urls.txt").write_text("\n".join(urls) + "\n")
    index = pkgs / "cache"
    index.mkdir()
    shutil.copy2(forge / "linux-64" / "repodata.json", index / "4b2cfd1a.json")
    (index / "4b2cfd1a.info.json").write_text('{"url": "file:///channel/linux-64/repodata.json"}\n')
    (index / "4b2cfd1a.json.lock").write_text("")
    (pkgs / "requests-2.32.3-pyhd8ed1ab_0.conda.partial").write_bytes(b"\0" * 3000)
    (pkgs / "numpy-3.0.0-py311h0_0.conda.partial").write_bytes(b"\0" * 100)  # recent: a download in progress
    (pkgs / ".logs").mkdir()
    (pkgs / ".logs" / "conda.log").write_text("log line\n" * 200)
    (pkgs / ".tmpa1b2c3").mkdir()
    (pkgs / ".tmpa1b2c3" / "half-extracted.txt").write_text("x" * 5000)
    (pkgs / "python-3.11.9-hab00c5b_0_cpython.c~").write_text("stale\n")
    for name in (
        "requests-2.32.3-pyhd8ed1ab_0.conda.partial",
        ".logs",
        ".tmpa1b2c3",
        "python-3.11.9-hab00c5b_0_cpython.c~",
    ):
        os.utime(pkgs / name, (OLD, OLD))


def age_packages(pkgs: Path) -> None:
    """Date every extracted package and tarball a week back: the world's cache holds past installs (clean
    leaves what is younger than an hour alone: a running conda may still be extracting or linking it)."""
    for entry in pkgs.iterdir():
        package = entry.is_dir() and not entry.is_symlink() and (entry / "info" / "index.json").is_file()
        if package or entry.name.endswith((".conda", ".tar.bz2")):
            os.utime(entry, (OLD, OLD), follow_symlinks=False)


def _traps(pkgs: Path, target: Path) -> None:
    """Symlinks pointing outside the cache, and a package whose files are hardlinked among themselves."""
    (pkgs / "evil-link").symlink_to(target)
    numpy = next(p for p in pkgs.glob("numpy-2.0.1-py312*") if p.is_dir())
    (numpy / "escape-file").symlink_to(target / "precious.txt")
    (numpy / "escape-dir").symlink_to(target)
    python = next(p for p in pkgs.glob("python-3.12.4-*") if p.is_dir())
    os.link(python / "bin" / "python3.12", python / "bin" / "python3.12-self-link")


@contextlib.contextmanager
def world_at(tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """build_world, removing the second-filesystem cache afterwards."""
    built = build_world(tmp_path, channels, monkeypatch)
    try:
        yield built
    finally:
        if built.shm_pkgs is not None:
            shutil.rmtree(built.shm_pkgs.parent, ignore_errors=True)


def names(data: dict[str, Any], category: str, cache: Path | None = None) -> set[str]:
    """The file names of a `clean --json` answer's items of one category (of one cache)."""
    return {
        Path(i["paths"][0]).name
        for i in data["items"]
        if i["category"] == category and (cache is None or i["cache"] == str(cache))
    }
