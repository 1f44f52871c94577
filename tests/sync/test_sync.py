"""`envguard sync` on real conda prefixes (the fixture channels, rattler-made): the smallest transaction,
shown first, asked on a terminal, applied with --yes; nothing touched by a dry run, without a terminal, or on
bad input; an interrupted sync finished by the next; an environment in sync answered without reading it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import envguard.sync.run as sync_run
from envguard.cache.statsig import stat_fingerprint
from envguard.errors import BackendError
from envguard.prefix import lockref
from envguard.prefix.history import parse
from envguard.sync import fast
from tests.helpers import (
    MakePrefix,
    check_out,
    envguard,
    files_opened,
    held_elsewhere,
    on_a_terminal,
    pip_install,
    prefix_tree,
)

BASE = ["python=3.11", "numpy=1.26", "requests=2.32.3", "zlib"]
TINY = "tinyproj-1.0.0-py3-none-any.whl"


@pytest.fixture
def locked(make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A real prefix (conda + a pip wheel from its file) and its lock, the wheel's path included."""
    prefix = make_prefix(BASE)
    pip_install(prefix, str(channels["wheels"] / TINY))
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "--include-local", "-o", str(lock)) == 0
    return prefix, lock


def drift(make_prefix: MakePrefix, channels: dict[str, Path], prefix: Path) -> None:
    """numpy upgraded, requests gone, six added (conda); tinyproj upgraded, other-pkg added (pip)."""
    make_prefix(["python=3.11", "numpy=2.0", "zlib", "six"])
    pip_install(prefix, "--upgrade", str(channels["wheels"] / "tinyproj-1.1.0-py3-none-any.whl"))
    pip_install(prefix, str(channels["wheels"] / "other_pkg-0.3.0-py3-none-any.whl"))


def sync(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = envguard("sync", *argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_sync_changes_only_what_differs_and_records_it_as_conda_does(
    locked: tuple[Path, Path],
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix, lock = locked
    drift(make_prefix, channels, prefix)
    untouched = prefix / "share" / "zlib" / "zlib-1.3.1.txt"
    inode = untouched.stat().st_ino
    code, out, err = sync(capsys, str(prefix), "--lock", str(lock), "--yes", "--backend", "embedded")
    assert code == 0, (out, err)
    lines = [line.split() for line in out.splitlines()]
    assert lines[lines.index(["Install:"]) + 1][:5] == ["+", "requests", "—", "2.32.3", "pyhd8ed1ab_0"]
    assert lines[lines.index(["Downgrade:"]) + 1][:6] == [
        "~",
        "numpy",
        "2.0.1",
        "py311hed25524_0",
        "1.26.4",
        "py311h64a7726_0",
    ]
    assert out.rstrip().endswith(
        f"Synced: {prefix} matches {lock} (3 conda, 2 pip change(s); embedded (py-rattler "
        f"{__import__('rattler').__version__}) + uv)"  # the engines that ran: conda's, then pip's
    ), out
    assert untouched.stat().st_ino == inode  # an unchanged package is not linked again
    assert check_out(prefix, lock, capsys, "--files") == (0, f"OK: {prefix} matches {lock}\n")
    last = parse((prefix / "conda-meta" / "history").read_text())[-1]
    assert last.command.startswith("envguard ")  # its argv (in-process here: pytest's)
    assert [a.rsplit("::", 1)[1] for a in last.removed] == [
        "numpy-2.0.1-py311hed25524_0",
        "six-1.16.0-pyh6c4a22f_0",
    ]
    assert [a.rsplit("::", 1)[1] for a in last.added] == [
        "numpy-1.26.4-py311h64a7726_0",
        "requests-2.32.3-pyhd8ed1ab_0",
    ]
    assert last.remove_specs == ("six",)  # the environment had asked for six; requests was asked for before
    assert "requests==2.32.3=pyhd8ed1ab_0" in last.update_specs
    ref = lockref.recall(prefix)
    assert ref is not None and ref.lock == lock.resolve() and ref.current()


def test_dry_run_and_no_terminal_change_nothing(
    locked: tuple[Path, Path],
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix, lock = locked
    drift(make_prefix, channels, prefix)
    before = stat_fingerprint(prefix)
    code, out, _err = sync(capsys, str(prefix), "--lock", str(lock), "--dry-run")
    assert code == 1 and out.rstrip().endswith(
        "Dry run: 3 conda, 2 pip change(s) planned; nothing was changed."
    )
    code, out, err = sync(capsys, str(prefix), "--lock", str(lock), "--dry-run", "--json")
    data = json.loads(out)
    assert code == 1 and data["schema_version"] == 1 and data["dry_run"] and not data["applied"]
    assert {(s["manager"], s["action"], s["name"]) for s in data["steps"]} == {
        ("conda", "downgrade", "numpy"),
        ("conda", "install", "requests"),
        ("conda", "remove", "six"),
        ("pip", "downgrade", "tinyproj"),
        ("pip", "uninstall", "other-pkg"),
    }
    numpy = next(s for s in data["steps"] if s["name"] == "numpy")
    assert numpy["from"]["version"] == "2.0.1" and numpy["to"] == {
        "version": "1.26.4",
        "build": "py311h64a7726_0",
        "channel": channels["forge"].resolve().as_uri(),
    }
    code, out, err = sync(capsys, str(prefix), "--lock", str(lock))  # no terminal here, and no --yes
    assert code == 2 and "numpy" in out and err.count("\n") == 1 and "pass --yes" in err, (out, err)
    assert stat_fingerprint(prefix) == before


def test_a_dry_run_changes_no_byte_of_the_environment_even_in_sync_with_another_lock(
    locked: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: `sync --dry-run` against a second lock the environment already satisfies rewrote
    etc/envguard/lock.json to that lock, which changes the lock the conda plugin follows."""
    prefix, lock = locked
    assert envguard("sync", str(prefix), "--lock", str(lock), "--yes") == 0  # records `lock`
    other = tmp_path / "other" / "conda-lock.yml"
    other.parent.mkdir()
    other.write_bytes(lock.read_bytes())
    before = prefix_tree(prefix)
    for extra in ([], ["--json"]):
        code, _out, _err = sync(capsys, str(prefix), "--lock", str(other), "--dry-run", *extra)
        assert code == 0
        assert prefix_tree(prefix) == before
    ref = lockref.recall(prefix)
    assert ref is not None and ref.lock == lock.resolve()


def test_in_sync_is_answered_without_reading_the_environment(
    locked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = locked
    first = sync(capsys, str(prefix), "--lock", str(lock))
    assert first == (0, f"OK: {prefix} already matches {lock}; nothing to do\n", "")
    first_json = sync(capsys, str(prefix), "--lock", str(lock), "--json")
    assert json.loads(first_json[1])["in_sync"] is True
    with files_opened() as opened:
        again = fast.answer(str(prefix), str(lock), "human", False)
    assert again == first[1]
    # the folders are listed for their stat fingerprint, as check's fast path does; no record is read
    assert not [p for p in opened if p.endswith(".json") and "conda-meta" in p], opened
    assert not [p for p in opened if ".dist-info" in p], opened
    assert sync(capsys, str(prefix), "--lock", str(lock), "--json") == first_json
    (prefix / "etc" / "envguard" / "lock.json").unlink()  # the stored answer holds only while it says so
    assert fast.answer(str(prefix), str(lock), "human", False) is None
    assert sync(capsys, str(prefix), "--lock", str(lock)) == first
    assert lockref.recall(prefix) is not None


def test_askedon_a_terminal(
    locked: tuple[Path, Path], make_prefix: MakePrefix, channels: dict[str, Path]
) -> None:
    prefix, lock = locked
    make_prefix(["python=3.11", "numpy=1.26", "zlib", "six"])  # requests gone, six added
    before = stat_fingerprint(prefix)
    code, shown = on_a_terminal(["sync", str(prefix), "--lock", str(lock)], "n\n")
    assert code == 1 and "Proceed ([y]/n)?" in shown and "Declined: nothing was changed." in shown, shown
    assert stat_fingerprint(prefix) == before
    code, shown = on_a_terminal(["sync", str(prefix), "--lock", str(lock)], "\n")  # Enter: yes, as in conda
    assert code == 0 and f"Synced: {prefix} matches {lock}" in " ".join(shown.split()), shown  # wrapped
    assert shown.count("Install:") == 1  # the plan is shown once, before the question


def test_bad_input_is_one_line_and_changes_nothing(
    locked: tuple[Path, Path],
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prefix, lock = locked
    drift(make_prefix, channels, prefix)
    before = stat_fingerprint(prefix)
    text = lock.read_text()
    numpy = channels["forge"].resolve().as_uri() + "/linux-64/numpy-1.26.4-py311h64a7726_0.conda"
    cases = {
        "another platform": (text.replace("linux-64", "osx-arm64"), 2, "no entry for platform linux-64"),
        "tampered archive": (_rehash(text, numpy), 3, "does not match"),
        "missing archive": (text.replace(numpy, numpy.replace("forge", "gone")), 3, "does not exist"),
    }
    for name, (body, code, words) in cases.items():
        bad = tmp_path / f"{name.replace(' ', '-')}.yml"
        bad.write_text(body)
        got, _out, err = sync(capsys, str(prefix), "--lock", str(bad), "--yes")
        assert (got, err.count("\n")) == (code, 1) and words in err, (name, err)
        assert stat_fingerprint(prefix) == before, name
    got, _out, err = sync(capsys, str(lock), "--lock", str(lock), "--yes")  # SOURCE: a file
    assert got == 2 and err.count("\n") == 1 and "not an environment" in err, err


def _rehash(text: str, url: str) -> str:
    """The lock with the sha256 of the entry for `url` replaced (the archive no longer matches it)."""
    head, tail = text.split(f"url: {url}\n", 1)
    at = tail.index("sha256: ") + len("sha256: ")
    return head + f"url: {url}\n" + tail[:at] + "ab" * 32 + tail[at + 64 :]


def test_a_pip_failure_changes_nothing(
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pip resolves what it must find itself (an index release) before anything changes: conda's part too."""
    prefix = make_prefix(BASE)
    pip_install(prefix, "--find-links", str(channels["wheels"]), "other-pkg")  # from an "index": by version
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    make_prefix(["python=3.11", "numpy=2.0", "requests=2.32.3", "zlib"])
    site = next((prefix / "lib").glob("python3*/site-packages"))
    assert envguard("sync", str(prefix), "--lock", str(lock), "--dry-run") == 1
    for dist in [*site.glob("other_pkg*"), *site.glob("other-pkg*")]:  # other-pkg gone: sync reinstalls it
        subprocess.run(["rm", "-rf", str(dist)], check=True)
    before = stat_fingerprint(prefix)
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # and there is no index to find it on
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    code, _out, err = sync(capsys, str(prefix), "--lock", str(lock), "--yes")
    assert code == 3 and err.count("\n") == 1 and "pip install" in err and "other-pkg" in err, err
    assert stat_fingerprint(prefix) == before


def test_an_interrupted_sync_is_finished_by_the_next(
    locked: tuple[Path, Path],
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C after conda's transaction, before pip's: check lists what is left, the next sync does it."""
    prefix, lock = locked
    drift(make_prefix, channels, prefix)

    def interrupted(*_args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(sync_run, "uninstall", interrupted)
        code, _out, err = sync(capsys, str(prefix), "--lock", str(lock), "--yes")
    assert code == 130 and "run the same `envguard sync` again to finish" in err, err
    code, out = check_out(prefix, lock, capsys)
    assert code == 1 and "Conda packages" not in out and "tinyproj (pip)" in out and "other-pkg" in out, out
    fix = out.split("\nHow to fix:\n", 1)[1].splitlines()
    assert envguard(*shlex.split(fix[0])[1:]) == 0
    assert check_out(prefix, lock, capsys) == (0, f"OK: {prefix} matches {lock}\n")


def test_a_failure_midway_says_how_to_finish(
    locked: tuple[Path, Path],
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prefix, lock = locked
    drift(make_prefix, channels, prefix)

    def broken(*_args: object, **_kwargs: object) -> list[str]:
        raise BackendError("pip install in PREFIX failed (exit 1): disk full")

    monkeypatch.setattr(sync_run, "install", broken)
    code, _out, err = sync(capsys, str(prefix), "--lock", str(lock), "--yes")
    assert code == 3 and err.count("\n") == 1, err
    assert "disk full; the environment is partly synced: run the same `envguard sync` again" in err


def test_a_pixi_lock_and_an_explicit_spec_are_locks_to_sync_to(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(BASE)
    pixi, explicit = tmp_path / "pixi.lock", tmp_path / "conda-linux-64.lock"
    assert envguard("lock", str(prefix), "--no-probe", "--format", "pixi", "-o", str(pixi)) == 0
    assert envguard("lock", str(prefix), "--no-probe", "--format", "explicit", "-o", str(explicit)) == 0
    for lock in (pixi, explicit):
        make_prefix(["python=3.11", "numpy=2.0", "zlib", "six"])
        code, out, err = sync(capsys, str(prefix), "--lock", str(lock), "--yes")
        assert code == 0, (lock, out, err)
        assert check_out(prefix, lock, capsys, "--files") == (0, f"OK: {prefix} matches {lock}\n")


def test_a_sync_waits_for_the_environments_lock_then_refuses_naming_the_holder(
    locked: tuple[Path, Path],
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another process changing the environment (a create, a sync) holds its lock: sync changes nothing."""
    prefix, lock = locked
    drift(make_prefix, channels, prefix)
    with held_elsewhere(prefix) as holder:
        before = stat_fingerprint(prefix)
        monkeypatch.setenv("ENVGUARD_LOCK_WAIT", "0.2")
        code, _out, err = sync(capsys, str(prefix), "--lock", str(lock), "--yes")
        said = err.splitlines()  # a "waiting for" line, then the refusal
        refused = f"envguard: error: {prefix} is being changed by process {holder.pid} "
        assert code == 2 and said[-1].startswith(refused), err
        assert said[-1].endswith("nothing was changed"), err
        assert stat_fingerprint(prefix) == before
    assert sync(capsys, str(prefix), "--lock", str(lock), "--yes")[0] == 0  # the lock is free again


def test_two_syncs_to_different_locks_at_once_end_equal_to_one_of_them(
    make_prefix: MakePrefix, tmp_path: Path
) -> None:
    """Issue 42: the plan was made before the environment's lock was taken, then applied stale: 7 of 8 pairs
    ended in an environment that matched neither lock. Planning happens under the lock now."""
    prefix = make_prefix(BASE)
    first, second = tmp_path / "a.lock.yml", tmp_path / "b.lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(first)) == 0
    make_prefix(["python=3.11", "numpy=2.0", "zlib", "six"])
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(second)) == 0
    start = [sys.executable, "-m", "envguard", "sync", str(prefix), "--yes", "--lock"]
    for _round in range(3):
        runs = [
            subprocess.Popen([*start, str(lock)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for lock in (first, second)
        ]
        said = [run.communicate(timeout=300) for run in runs]
        assert [run.returncode for run in runs] == [0, 0], said
        ends = [
            subprocess.run(
                [sys.executable, "-m", "envguard", "check", str(prefix), "--lock", str(lock)],
                capture_output=True,
                text=True,
                timeout=120,
            ).returncode
            for lock in (first, second)
        ]
        assert sorted(ends) == [0, 1], (ends, said)


def test_dot_segments_in_a_lock_url_are_the_same_channel(
    locked: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: a lock URL spelt `linux-64/../linux-64/` made every sync reinstall and exit 1 forever."""
    prefix, lock = locked
    text = lock.read_text()
    assert "/linux-64/" in text
    dotted = tmp_path / "dotted.lock.yml"
    dotted.write_text(text.replace("/linux-64/", "/linux-64/../linux-64/"))
    assert check_out(prefix, dotted, capsys)[0] == 0
    assert sync(capsys, str(prefix), "--lock", str(dotted), "--yes")[0] == 0


def test_a_torn_record_left_by_a_full_disk_is_repaired_by_the_next_sync(
    locked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: ENOSPC during a sync left a 0-byte conda-meta/*.json; the next sync said "an install is
    running in this environment" (nothing was) or "corrupt conda-meta record", and could not finish."""
    prefix, lock = locked
    (record,) = (prefix / "conda-meta").glob("numpy-*.json")
    record.write_bytes(b"")  # what a write stopped by ENOSPC leaves
    code, _out, err = sync(capsys, str(prefix), "--lock", str(lock), "--dry-run")
    assert code == 2 and "torn" in err and err.count("\n") == 1, err
    assert record.exists()  # a dry run changes nothing
    code, _out, err = sync(capsys, str(prefix), "--lock", str(lock), "--yes")
    assert code == 0, err
    assert "torn" in err and "numpy" in err
    assert check_out(prefix, lock, capsys)[0] == 0
