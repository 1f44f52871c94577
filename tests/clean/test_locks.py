"""`envguard clean` refuses while another process holds a cache lock, naming it — with the locks real tools
take: rattler's flock on `.cache.lock`, mamba's byte-21 record lock on `pkgs/pkgs.lock` (PID inside), conda's
byte-21 lock on a repodata `*.info.json`, and conda 4.3's `*.pid<PID>.conda_lock` files."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from envguard.clean.locks import proc_locks
from tests.clean.world import age_packages, tree
from tests.helpers import envguard, install

HOLDER = textwrap.dedent("""
    import fcntl, os, sys, time
    handle = open(sys.argv[1], "r+b")
    if sys.argv[2] == "flock":
        fcntl.flock(handle, fcntl.LOCK_EX)
    else:
        fcntl.lockf(handle, fcntl.LOCK_EX, 1, 21)
        handle.write(str(os.getpid()).encode())
        handle.flush()
    print("locked", flush=True)
    time.sleep(120)
""")


@contextlib.contextmanager
def holding(path: Path, how: str) -> Iterator[subprocess.Popen[str]]:
    """A real second process holding `path` locked the way rattler (flock) or mamba/conda (posix) do."""
    path.touch()
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), how], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def cache(tmp_path: Path, channels: dict[str, Path]) -> Path:
    """A rattler-made cache holding one unused package (its environment was deleted)."""
    pkgs = tmp_path / "pkgs"
    shutil.rmtree(install(tmp_path / "gone", ["zlib=1.3.1"], [channels["forge"]], cache=pkgs))
    age_packages(pkgs)
    (pkgs / "cache").mkdir()
    (pkgs / "cache" / "abc.json").write_text("{}")
    return pkgs


def _dry_run(capsys: pytest.CaptureFixture[str], pkgs: Path) -> dict[str, object]:
    assert envguard("clean", "--json", "--cache", str(pkgs)) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


@pytest.mark.parametrize(
    ("lock_name", "how", "convention"),
    [
        (".cache.lock", "flock", "rattler"),
        ("pkgs.lock", "posix", "mamba"),
        ("cache/abc.info.json", "posix", "conda repodata"),
        # issue 28: an envguard create/verify between fetching and linking; conda 26 writing a download
        (".envguard-install.lock", "flock", "envguard install"),
        ("numpy-2.0.1-py312h1103770_0.conda.partial", "posix", "conda download"),
    ],
)
def test_held_lock_refuses_and_names_the_process(
    cache: Path, capsys, lock_name: str, how: str, convention: str
) -> None:
    lock = cache / lock_name
    with holding(lock, how) as holder:
        data = _dry_run(capsys, cache)
        caches = data["caches"]
        assert isinstance(caches, list)
        [held] = caches[0]["locked_by"]
        assert held["pid"] == holder.pid and held["convention"] == convention
        assert "python" in held["command"] and held["lock_file"] == str(lock)
        before = tree(cache)
        for action in (["--yes"], ["--undo"], ["--purge-trash"]):
            assert envguard("clean", "--cache", str(cache), *action) == 3, action
            err = capsys.readouterr().err
            assert f"process {holder.pid}" in err and str(lock) in err and err.count("\n") == 1, err
        assert tree(cache) == before
    assert envguard("clean", "--cache", str(cache), "--yes") == 0
    assert not any(cache.glob("zlib-1.3.1-*/"))


def test_legacy_conda_lock_file_of_a_live_process(cache: Path, capsys) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (cache / f"pkgs.pid{proc.pid}.conda_lock").touch()
        assert envguard("clean", "--cache", str(cache), "--yes") == 3
        assert f"process {proc.pid}" in capsys.readouterr().err
    finally:
        proc.kill()
        proc.wait()
    assert envguard("clean", "--cache", str(cache), "--yes") == 0, "a dead PID's lock file holds nothing"


def test_proc_locks_parser() -> None:
    text = (
        "1: POSIX  ADVISORY  WRITE 7580 fe:00:2148468 21 21\n"
        "2: FLOCK  ADVISORY  WRITE 7581 00:2a:99 0 EOF\n"
        "2: -> FLOCK  ADVISORY  WRITE 7590 00:2a:99 0 EOF\n"
        "3: OFDLCK ADVISORY  READ  -1 08:01:12 0 EOF\n"
    )
    table = proc_locks(text)
    assert table[(0xFE, 0, 2148468)] == [("POSIX", 7580)]
    assert table[(0, 0x2A, 99)] == [("FLOCK", 7581), ("FLOCK", 7590)]
    assert table[(8, 1, 12)] == [("OFDLCK", -1)]
