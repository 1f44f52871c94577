"""`envguard clean` against what runs beside it and what is mounted inside it (issue 28, findings 3, 6, 7, 10
and 15): a bind mount inside an unused package is never entered, what environments use is read under the
caches' locks, a running conda's fresh downloads and extractions are left alone, a read-only cache is exit 3,
and clean does not list itself as a lock holder."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envguard.clean import locks
from envguard.prefix.condaconfig import register
from envguard.prefix.integrity import verify_files
from tests.clean.world import age_packages, tree, verify_environment
from tests.helpers import envguard, install, mounted
from tests.realconda import Conda


def _clean(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = envguard("clean", "--json", *argv)
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def _cache(tmp_path: Path, channels: dict[str, Path], *specs: str) -> Path:
    """A package cache holding the packages of `specs`, whose environment was deleted a week ago."""
    pkgs = tmp_path / "pkgs"
    for n, spec in enumerate(specs):
        install(tmp_path / f"gone{n}", [spec], [channels["forge"]], cache=pkgs)
        subprocess.run(["rm", "-rf", str(tmp_path / f"gone{n}")], check=True)
    age_packages(pkgs)
    return pkgs


def test_a_bind_mount_inside_an_unused_package_is_never_entered(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 3: `--yes` moved the package with the mount inside, and `--purge-trash` emptied the mounted
    folder (outside every cache) before `Device or resource busy`."""
    pkgs = _cache(tmp_path, channels, "python=3.12", "zlib=1.2.13")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("the user's data, not the cache's\n")
    package = next(p for p in pkgs.glob("python-3.12*") if p.is_dir())
    point = package / "mnt"
    point.mkdir()
    os.utime(package, (time.time() - 7 * 86400,) * 2)
    before = tree(outside)
    with mounted(["--bind", str(outside)], point):
        code, data = _clean(capsys, "--cache", str(pkgs), "--yes")
        assert code == 0
        assert package.is_dir() and (point / "precious.txt").is_file()
        assert data["kept"]["holds a mount point"] == 1
        assert any(str(point) in p and "mount" in p for p in data["problems"]), data["problems"]
        moved = [Path(m["to"]) for m in data["result"]["moved"]]
        assert [m.name for m in moved if m.name.startswith("zlib")], moved
        # a mount that appears inside the trash after the move: purge leaves it and everything above it
        holder = next(m for m in moved if m.name.startswith("zlib")) / "mounted-here"
        holder.mkdir()
        with mounted(["--bind", str(outside)], holder):
            capsys.readouterr()
            assert envguard("clean", "--cache", str(pkgs), "--purge-trash") == 3
            err = capsys.readouterr()
            assert str(holder) in err.out + err.err
            assert tree(outside) == before and holder.is_dir()
        assert envguard("clean", "--cache", str(pkgs), "--purge-trash") == 0
        assert tree(outside) == before and not (pkgs / ".envguard-trash").exists()
    assert tree(outside) == before


def test_usage_is_read_after_the_caches_are_locked(
    tmp_path: Path,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Finding 6: usage was read before the lock was taken; an environment whose install finished in that
    window lost its package folders to the trash (a softlinked one loses its files at purge)."""
    pkgs = _cache(tmp_path, channels, "python=3.12", "zlib=1.2.13")
    late = tmp_path / "envs" / "late"
    real_hold = locks.hold

    @contextlib.contextmanager
    def hold_after_a_create(caches: Any) -> Iterator[None]:
        # a create that finishes just before clean takes the caches' locks: real rattler, the same cache
        install(late, ["python=3.12"], [channels["forge"]], cache=pkgs)
        register(late)
        with real_hold(caches):
            yield

    monkeypatch.setattr(locks, "hold", hold_after_a_create)
    code, data = _clean(capsys, "--cache", str(pkgs), "--yes")
    assert code == 0
    moved = {Path(m["from"]).name for m in data["result"]["moved"]}
    assert not any(name.startswith("python-3.12") for name in moved), moved
    assert any(name.startswith("zlib-1.2.13") for name in moved), moved  # the unused one still goes
    assert any(p.name.startswith("python-3.12") for p in pkgs.iterdir() if p.is_dir())
    assert verify_environment(late) == []


def test_a_running_conda_s_downloads_and_extractions_are_left_alone(
    conda: Conda, tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 7: conda 26.7.1 holds no lock while it extracts; clean moved its fresh tarballs and folders
    to the trash and conda failed `Encountered corrupt package tarball`."""
    pkgs = Path(os.environ["CONDA_PKGS_DIRS"])
    pkgs.mkdir(parents=True, exist_ok=True)
    (pkgs / "urls.txt").write_text("")
    prefix = tmp_path / "fresh"
    proc = subprocess.Popen(
        [str(conda.kit.exe), "create", "--yes", "--prefix", str(prefix), "python=3.12", "numpy", "requests"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    codes = []
    while proc.poll() is None:
        code, _data = _clean(capsys, "--cache", str(pkgs), "--yes")
        codes.append(code)
    output = proc.communicate()[0]
    assert proc.returncode == 0, output
    assert "corrupt" not in output
    # 3: conda held a download's lock, and clean said so and moved nothing
    assert set(codes) <= {0, 3} and codes, codes
    assert verify_files(prefix).problems == ()


def test_a_read_only_cache_is_exit_3_with_one_line(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 10: the trash folder's mkdir on a read-only file system was a traceback and exit 4."""
    pkgs = _cache(tmp_path, channels, "zlib=1.2.13")
    before = tree(pkgs)
    with mounted(["--bind", str(pkgs)], pkgs), mounted(["-o", "remount,bind,ro"], pkgs):
        code, data = _clean(capsys, "--cache", str(pkgs), "--yes")
        assert code == 3
        [failure] = data["result"]["failed"]
        assert str(pkgs) in failure and "Read-only file system" in failure and "nothing" in failure
        capsys.readouterr()
        assert envguard("clean", "--cache", str(pkgs), "--yes") == 3
        err = capsys.readouterr().err
        assert "internal error" not in err
    assert tree(pkgs) == before


def test_clean_does_not_list_itself_as_a_holder(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 15: `clean --yes --json` named its own PID under locked_by (it holds the locks by then)."""
    pkgs = _cache(tmp_path, channels, "zlib=1.2.13")
    assert (pkgs / ".cache.lock").is_file()  # rattler's cache-wide lock, which clean takes
    code, data = _clean(capsys, "--cache", str(pkgs), "--yes")
    assert code == 0 and data["result"]["moved"]
    assert [c["locked_by"] for c in data["caches"]] == [[]]
