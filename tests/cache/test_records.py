"""The slim-record cache: unchanged records are not parsed again, any change to a record (or to a symlinked
record's target) is seen, and every command's output is byte-identical with the cache off, cold and warm."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from envguard.cache import cache_dir
from envguard.cache import records as slim
from envguard.prefix.reader import read_prefix
from tests.helpers import MakePrefix, envguard, files_opened


@pytest.fixture
def opened() -> Iterator[list[str]]:
    """conda-meta records opened while the test body runs."""
    with files_opened() as seen:
        yield seen


def _records_opened(paths: list[str]) -> list[str]:
    return [p for p in paths if "conda-meta" in p and p.endswith(".json")]


@pytest.fixture
def aged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records count as settled at once (the real 2 s rule has its own test)."""
    monkeypatch.setattr(slim, "FRESH_NS", -(10**12))


def _versions(prefix: Path) -> dict[str, str]:
    return {p.name: p.version for p in read_prefix(prefix).packages if p.manager == "conda"}


def test_unchanged_records_are_not_parsed_again(
    make_prefix: MakePrefix, aged: None, opened: list[str]
) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "zlib"])
    first = read_prefix(prefix)
    assert len(_records_opened(opened)) >= 3  # cold: every record parsed
    _header, stored = json.loads(next((cache_dir() / "records").glob("*.json")).read_text())
    # no file lists: per record its signature, its Package and the specs it says were requested
    names = sorted(slim_[1][0]["name"] for slim_ in stored.values())
    assert names == sorted(p.name for p in first.packages if p.manager == "conda")
    opened.clear()
    assert read_prefix(prefix) == first
    assert _records_opened(opened) == []  # warm: none opened, the slim fields come from the cache


def test_in_place_edit_with_restored_mtime_is_seen(make_prefix: MakePrefix, aged: None) -> None:
    prefix = make_prefix(["python=3.11", "zlib=1.3.1"])
    assert _versions(prefix)["zlib"] == "1.3.1"
    record = next((prefix / "conda-meta").glob("zlib-*.json"))
    before = record.stat()
    text = record.read_text()
    with open(record, "r+", encoding="utf-8") as handle:  # same inode, same size
        handle.write(text.replace('"version": "1.3.1"', '"version": "1.3.9"'))
    os.utime(record, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = record.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    assert _versions(prefix)["zlib"] == "1.3.9"


def test_symlinked_record_is_signed_by_its_target(
    make_prefix: MakePrefix, tmp_path: Path, aged: None
) -> None:
    prefix = make_prefix(["python=3.11", "zlib=1.3.1"])
    record = next((prefix / "conda-meta").glob("zlib-*.json"))
    text = record.read_text()
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text(text)
    two.write_text(text.replace('"version": "1.3.1"', '"version": "1.3.7"'))
    stamp = one.stat().st_mtime_ns
    os.utime(two, ns=(stamp, stamp))
    record.unlink()
    record.symlink_to(one)
    assert _versions(prefix)["zlib"] == "1.3.1"
    record.unlink()
    record.symlink_to(two)  # same size and mtime, another target
    assert _versions(prefix)["zlib"] == "1.3.7"
    two.write_text(text.replace('"version": "1.3.1"', '"version": "1.3.8"'))  # the target edited
    assert _versions(prefix)["zlib"] == "1.3.8"


def test_just_written_records_are_not_stored(make_prefix: MakePrefix) -> None:
    prefix = make_prefix(["python=3.11", "zlib"])
    wait = slim.FRESH_NS / 1e9 - (
        time.time() - max(p.stat().st_ctime for p in (prefix / "conda-meta").iterdir())
    )
    read_prefix(prefix)
    assert wait > 0.5 and not (cache_dir() / "records").exists()  # under 2 s old: nothing stored yet
    time.sleep(wait + 0.1)
    read_prefix(prefix)
    stored = json.loads(next((cache_dir() / "records").glob("*.json")).read_text())[1]
    assert {n.split("-")[0] for n in stored} >= {"python", "zlib"}


def test_broken_cache_entry_is_ignored_and_the_cache_can_be_off(
    make_prefix: MakePrefix, aged: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = make_prefix(["python=3.11", "zlib"])
    expected = read_prefix(prefix)
    [entry] = (cache_dir() / "records").glob("*.json")
    header, good = json.loads(entry.read_text())
    name = next(iter(good))
    wrong = {**good, name: [good[name][0], [{**good[name][1][0], "channel": 7}, good[name][1][1]]]}
    short = {name: [good[name][0], [good[name][1][0]]]}
    for garbage in (
        "{",
        "[]",
        '{"header": 1}',
        json.dumps([header, 3]),
        json.dumps([header, wrong]),  # a channel that is not text
        json.dumps([header, short]),  # a record without its requested specs
    ):
        entry.write_text(garbage)
        shutil.rmtree(cache_dir() / "envs")  # the whole-environment entry would serve it without the records
        assert read_prefix(prefix) == expected, garbage
    entry.unlink()
    monkeypatch.setenv("ENVGUARD_RECORD_CACHE", "0")
    assert read_prefix(prefix) == expected and not entry.exists()


def _outputs(a: Path, b: Path, work: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """What snapshot, lock, export, check and diff print or write for the same prefixes."""
    runs = {
        "snapshot": ["snapshot", str(a), "--no-probe"],
        "lock": ["lock", str(a), "--no-probe", "-o", str(work / "conda-lock.yml")],
        "explicit": ["lock", str(a), "--no-probe", "--format", "explicit", "-o", str(work / "spec.txt")],
        "export": ["export", str(a)],
        "check": ["check", str(a), "--lock", str(work / "conda-lock.yml"), "--json", "--no-cache"],
        "diff": ["diff", str(a), str(b), "--json"],
        "diff-same": ["diff", str(a), str(a)],
    }
    result: dict[str, str] = {}
    for name, argv in runs.items():
        code = envguard(*argv)
        result[name] = f"exit {code}\n{capsys.readouterr().out}"
    for name in ("conda-lock.yml", "spec.txt"):
        result[name] = (work / name).read_text()
    return result


def test_outputs_are_byte_identical_with_the_cache_off_cold_and_warm(
    make_prefix: MakePrefix,
    tmp_path: Path,
    aged: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    opened: list[str],
) -> None:
    a = make_prefix(["python=3.11", "numpy=1.26", "pytorch=2.1.0=*cuda11.8*", "requests=2.32.3"], cuda="12.4")
    b = make_prefix(["python=3.11", "numpy=2.0", "requests=2.31.0", "six"], name="b")
    monkeypatch.setenv("ENVGUARD_RECORD_CACHE", "0")  # every record parsed whole: the code before the cache
    golden = _outputs(a, b, tmp_path, capsys)
    assert not (cache_dir() / "records").exists()
    monkeypatch.delenv("ENVGUARD_RECORD_CACHE")
    cold = _outputs(a, b, tmp_path, capsys)
    opened.clear()
    warm = _outputs(a, b, tmp_path, capsys)
    assert _records_opened(opened) == []  # the warm run really read the cache
    for name, text in golden.items():
        assert cold[name] == text, name
        assert warm[name] == text, name
    assert golden["check"].startswith("exit 0") and golden["diff"].startswith("exit 1")
