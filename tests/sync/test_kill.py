"""kill -9 during `envguard sync` (issue 42): a sync killed at any point of its change, its linking child
included, leaves an environment the next sync finishes: that sync ends 0, the environment equals the lock,
and it holds exactly the files a fresh environment of the lock holds (no stray file or empty folder, nothing
left beside it). Found: rattler's temporary records, its symlink probe and its CACHEDIR.TAG were left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import envguard, spec_lock

OLD = ("python=3.11", "zlib")
NEW = ("python=3.12", "zlib", "numpy=1.26")


def _files(prefix: Path) -> set[str]:
    """What a prefix holds, as paths: byte-code caches and envguard's own record aside (Python writes the
    caches when it runs; the record names the lock's path)."""
    out = set()
    for path in prefix.rglob("*"):
        rel = path.relative_to(prefix)
        if "__pycache__" in rel.parts or rel.parts[:2] == ("etc", "envguard"):
            continue
        out.add(str(rel) + ("/" if path.is_dir() and not path.is_symlink() else ""))
    return out


def _sync(prefix: Path, lock: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "envguard", "sync", str(prefix), "--lock", str(lock), "--yes"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its linking child is in its group: killpg ends both
    )


def _beside(prefix: Path) -> list[str]:
    return sorted(p.name for p in prefix.parent.iterdir() if p.name.startswith(f".{prefix.name}"))


@pytest.mark.slow
def test_kill_9_at_any_point_of_sync_is_finished_by_the_next(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forge = channels["forge"]
    old_lock, new_lock = spec_lock(tmp_path / "old", forge, *OLD), spec_lock(tmp_path / "new", forge, *NEW)
    envs = tmp_path / "envs"
    fresh = {}
    for name, lock in (("old", old_lock), ("new", new_lock)):  # the reference trees, made by create
        assert envguard("create", "--lock", str(lock), "-p", str(envs / f"fresh-{name}")) == 0
        fresh[name] = _files(envs / f"fresh-{name}")
    work = envs / "work"
    assert envguard("create", "--lock", str(old_lock), "-p", str(work)) == 0
    start = time.monotonic()
    assert _sync(work, new_lock).wait(timeout=300) == 0
    took = time.monotonic() - start
    assert envguard("sync", str(work), "--lock", str(old_lock), "--yes") == 0

    meta = work / "conda-meta"
    points: list[tuple[str, Callable[[], bool]]] = [
        ("the environment's lock is taken", lambda: os.path.exists(envs / ".work.envguard-lock")),
        ("python 3.12's files appear", lambda: (work / "lib" / "python3.12").is_dir()),
        ("numpy's record is written", lambda: any(meta.glob("numpy-*.json"))),
        ("python 3.11's record is gone", lambda: not any(meta.glob("python-3.11*.json"))),
        *[
            (f"{k * 10}% of a sync's time", lambda k=k: time.monotonic() - t0 > took * k / 10)
            for k in range(1, 10)
        ],
    ]
    killed_at: list[str] = []
    for label, reached in points:
        t0 = time.monotonic()
        proc = _sync(work, new_lock)
        while proc.poll() is None and not reached():
            time.sleep(0.0005)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            killed_at.append(label)
        proc.wait(timeout=60)
        capsys.readouterr()
        code = envguard("sync", str(work), "--lock", str(new_lock), "--yes")
        err = capsys.readouterr().err
        assert code == 0, (label, err)
        assert envguard("check", str(work), "--lock", str(new_lock)) == 0, label
        assert _files(work) ^ fresh["new"] == set(), (label, sorted(_files(work) ^ fresh["new"])[:20])
        assert _beside(work) == [], (label, _beside(work))
        assert envguard("sync", str(work), "--lock", str(old_lock), "--yes") == 0, (
            label
        )  # the next round's start
        assert _files(work) ^ fresh["old"] == set(), (label, sorted(_files(work) ^ fresh["old"])[:20])
    assert len(killed_at) >= 6, killed_at  # most points were reached before the sync finished
