"""The check fast path: an unchanged environment is confirmed from stat metadata with minimal imports, and the
cache can never turn drift into a pass (drift is never cached; any change to the environment or the inputs goes
back to the full comparison)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envguard import statcache
from tests.conftest import MakePrefix
from tests.helpers import REPO, envguard, pip_install

CACHED = "(unchanged since the last full check)"


@pytest.fixture
def locked(make_prefix: MakePrefix, tmp_path: Path) -> tuple[Path, Path]:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "zlib"])
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    return prefix, lock


def _check(prefix: Path, lock: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = envguard("check", str(prefix), "--lock", str(lock), *extra)
    return code, capsys.readouterr().out


def test_second_check_is_served_from_the_cache_in_every_format(
    locked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = locked
    code, out = _check(prefix, lock, capsys)
    assert code == 0 and CACHED not in out
    code, out = _check(prefix, lock, capsys)
    assert code == 0 and out.rstrip().endswith(CACHED)
    code, out = _check(prefix, lock, capsys, "--json")
    assert code == 0 and json.loads(out)["clean"] is True
    code, out = _check(prefix, lock, capsys, "--no-cache")
    assert code == 0 and CACHED not in out


def test_drift_is_never_cached_and_any_change_reruns_the_full_check(
    locked: tuple[Path, Path], channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = locked
    assert _check(prefix, lock, capsys)[0] == 0
    pip_install(prefix, str(channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl"))
    for _ in range(2):  # drift stays drift, run after run
        code, out = _check(prefix, lock, capsys)
        assert code == 1 and "tinyproj" in out and CACHED not in out
    site = next((prefix / "lib").glob("python3*/site-packages"))
    for path in sorted(site.glob("tinyproj*"), reverse=True):
        subprocess.run(["rm", "-rf", str(path)], check=True)
    assert _check(prefix, lock, capsys) == (0, f"OK: {prefix} matches {lock}\n")
    lock.write_text(lock.read_text().replace("version: 1.26.4", "version: 1.26.5", 1))  # the lock changes
    code, out = _check(prefix, lock, capsys)
    assert code == 1 and "numpy: 1.26.5" in out


def test_in_place_record_edit_with_restored_mtime_is_not_masked(
    locked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = locked
    assert _check(prefix, lock, capsys)[0] == 0
    assert _check(prefix, lock, capsys)[1].rstrip().endswith(CACHED)
    [record] = (prefix / "conda-meta").glob("numpy-1.26.4-*.json")
    before = record.stat()
    text = record.read_text()
    with open(record, "r+", encoding="utf-8") as handle:  # same inode, same size, old mtime restored
        handle.write(text.replace('"version": "1.26.4"', '"version": "1.26.5"', 1))
    os.utime(record, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = record.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    code, out = _check(prefix, lock, capsys)
    assert code == 1 and "numpy: 1.26.4" in out and "1.26.5" in out


def test_stat_fingerprint_covers_conda_meta_and_pip_metadata(
    locked: tuple[Path, Path], channels: dict[str, Path]
) -> None:
    prefix, _lock = locked
    first = statcache.stat_fingerprint(prefix)
    assert statcache.stat_fingerprint(prefix) == first
    (prefix / "share" / "unrelated.txt").write_text("not package metadata\n")
    assert statcache.stat_fingerprint(prefix) == first
    pip_install(prefix, str(channels["wheels"] / "other_pkg-0.3.0-py3-none-any.whl"))
    second = statcache.stat_fingerprint(prefix)
    assert second != first
    (prefix / "conda-meta" / "history").write_text("==> 2026-01-01 00:00:00 <==\n")
    assert statcache.stat_fingerprint(prefix) != second


_PROBE_IMPORTS = (
    "import sys; from envguard.cli import run; code = run({argv!r}); "
    "print(code, sorted(m for m in ('torch', 'rattler', 'deepdiff', 'rich', 'yaml', 'numpy') if m in sys.modules))"
)


def _imports(argv: list[str]) -> str:
    done = subprocess.run([sys.executable, "-c", _PROBE_IMPORTS.format(argv=argv)], cwd=REPO, env=dict(os.environ),
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


def test_fast_path_and_full_check_stay_light(locked: tuple[Path, Path]) -> None:
    prefix, lock = locked
    argv = ["check", str(prefix), "--lock", str(lock)]
    assert _imports(argv) == "0 ['yaml']"  # full check: parses the lock once, nothing else heavy
    assert _imports(argv) == "0 []"  # fast path: nothing heavy at all
    assert _imports([*argv, "--no-cache"]) == "0 []"  # full check again: the parsed lock is cached as JSON
