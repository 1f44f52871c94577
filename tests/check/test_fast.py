"""The check fast path: an unchanged environment is confirmed from stat metadata with minimal imports, and the
cache can never turn drift into a pass (drift is never cached; any change to the environment or the inputs
goes back to the full comparison)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.cache import checks as statcache
from tests.helpers import REPO, MakePrefix, check_out, envguard, pip_install

CACHED = "(unchanged since the last full check)"


@pytest.fixture
def locked(make_prefix: MakePrefix, tmp_path: Path) -> tuple[Path, Path]:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "zlib"])
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    return prefix, lock


def test_second_check_is_served_from_the_cache_in_every_format(
    locked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = locked
    code, out = check_out(prefix, lock, capsys)
    assert code == 0 and CACHED not in out
    code, out = check_out(prefix, lock, capsys)
    assert code == 0 and out.rstrip().endswith(CACHED)
    code, out = check_out(prefix, lock, capsys, "--json")
    assert code == 0 and json.loads(out)["clean"] is True
    code, out = check_out(prefix, lock, capsys, "--no-cache")
    assert code == 0 and CACHED not in out


def test_drift_is_never_cached_and_any_change_reruns_the_fullcheck_out(
    locked: tuple[Path, Path], channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = locked
    assert check_out(prefix, lock, capsys)[0] == 0
    pip_install(prefix, str(channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl"))
    for _ in range(2):  # drift stays drift, run after run
        code, out = check_out(prefix, lock, capsys)
        assert code == 1 and "tinyproj" in out and CACHED not in out
    site = next((prefix / "lib").glob("python3*/site-packages"))
    for path in sorted(site.glob("tinyproj*"), reverse=True):
        subprocess.run(["rm", "-rf", str(path)], check=True)
    assert check_out(prefix, lock, capsys) == (0, f"OK: {prefix} matches {lock}\n")
    text = lock.read_text().replace("version: 1.26.4", "version: 1.26.5", 1)  # the lock changes
    lock.write_text(text.replace("/numpy-1.26.4-", "/numpy-1.26.5-", 1))  # (its URL with it: a whole entry)
    code, out = check_out(prefix, lock, capsys)
    assert code == 1 and re.search(r"numpy \(\S+\): 1\.26\.5 ", out), out


def test_in_place_record_edit_with_restored_mtime_is_not_masked(
    locked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = locked
    assert check_out(prefix, lock, capsys)[0] == 0
    assert check_out(prefix, lock, capsys)[1].rstrip().endswith(CACHED)
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
    code, out = check_out(prefix, lock, capsys)
    assert code == 1 and re.search(r"numpy \(\S+\): 1\.26\.4 \S+ in the lock → 1\.26\.5 ", out), out


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


HEAVY = ("torch", "rattler", "deepdiff", "rich", "yaml", "numpy", "hashlib", "json")  # click is the parser
# The heavy modules loaded, printed as the process ends: by an exit handler, or just before os._exit (anything
# that loaded rattler ends without finalising).
_PROBE_IMPORTS = (
    "import atexit, os, sys\n"
    "def report():\n"
    "    print('IMPORTED', sorted(m for m in {heavy!r} if m in sys.modules), flush=True)\n"
    "atexit.register(report)\n"
    "_exit = os._exit\n"
    "def exit_now(code):\n"
    "    report()\n"
    "    _exit(code)\n"
    "os._exit = exit_now\n"
    "sys.argv = ['envguard', *{argv!r}]\n"
    "from envguard.cli.app import main\n"
    "main()\n"
)


def _launch(argv: list[str]) -> tuple[int, str, list[str]]:
    """Run the console script's entry point; return (exit code, output, heavy modules it imported)."""
    code = _PROBE_IMPORTS.format(argv=argv, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    modules = [m.strip("'") for m in lines[-1].removeprefix("IMPORTED [").rstrip("]").split(", ") if m]
    return done.returncode, "\n".join(lines[:-1]) + done.stderr, modules


def test_console_script_fast_and_full_paths_stay_light(
    locked: tuple[Path, Path], channels: dict[str, Path]
) -> None:
    prefix, lock = locked
    argv = ["check", str(prefix), "--lock", str(lock)]
    code, out, modules = _launch(argv)  # full check, lock parsed once: no deepdiff, rattler or rich
    assert (code, modules) == (0, ["hashlib", "json", "yaml"]) and CACHED not in out
    code, out, modules = _launch(argv)  # fast path: a few standard library modules, not even json
    assert (code, modules) == (0, []) and out.endswith(CACHED)
    pip_install(prefix, str(channels["wheels"] / "other_pkg-0.3.0-py3-none-any.whl"))
    code, out, modules = _launch(argv)  # a change: full check, the parsed lock comes from the JSON cache
    assert (code, modules) == (1, ["hashlib", "json"]) and "other-pkg (pip) 0.3.0" in out
    code, out, modules = _launch([*argv, "--no-cache"])
    assert code == 1 and "other-pkg (pip) 0.3.0" in out
    code, out, _ = _launch(["check", str(prefix), "--lock", str(lock.with_name("missing.yml"))])
    assert code == 2 and out.strip().count("\n") == 0 and "no such lock file" in out


def test_statcache_agrees_with_the_modules_it_mirrors() -> None:
    from envguard.cache import cache_dir, statsig
    from envguard.prefix import pip_dist

    assert statcache.cache_root() == str(cache_dir() / "check")

    assert statsig.READ_FILES == pip_dist.READ_FILES  # the fingerprint signs every file the pip reader opens


_SCANNED: list[str] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    # the walk opens conda-meta to scan it through a descriptor (else it scans it by path)
    if event in ("open", "os.scandir") and args and str(args[0]).endswith("conda-meta"):
        _SCANNED.append(str(args[0]))


sys.addaudithook(_audit)  # the interpreter's own record of every walk of conda-meta (the stat fingerprint)


def test_a_full_check_stores_the_verdict_the_next_lookup_matches(
    locked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = locked
    history = prefix / "conda-meta" / "history"
    argv = ("check", str(prefix), "--lock", str(lock))
    with open(history, "a", encoding="utf-8") as handle:
        handle.write("# a change the fingerprint sees\n")
    assert envguard(*argv) == 0
    assert CACHED not in capsys.readouterr().out
    _SCANNED.clear()
    assert envguard(*argv) == 0 and len(_SCANNED) == 1  # the stored verdict: one walk, and no read
    assert capsys.readouterr().out.rstrip().endswith(CACHED)
