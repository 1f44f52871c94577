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
    entry = json.loads(next((cache_dir() / "records").glob("*.json")).read_text())
    assert set(entry) == {"header", "names", "signs", "specs", "rows"}  # no file lists: a row per package
    assert [row[1] for row in entry["rows"]] == sorted(p.name for p in first.packages if p.manager == "conda")
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
    stored = json.loads(next((cache_dir() / "records").glob("*.json")).read_text())["names"]
    assert {n.split("-")[0] for n in stored} >= {"python", "zlib"}


def test_broken_cache_entry_is_ignored_and_the_cache_can_be_off(
    make_prefix: MakePrefix, aged: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = make_prefix(["python=3.11", "zlib"])
    expected = read_prefix(prefix)
    [entry] = (cache_dir() / "records").glob("*.json")
    good = json.loads(entry.read_text())
    wrong_row = {**good, "rows": [[*good["rows"][0][:5], 7, *good["rows"][0][6:]], *good["rows"][1:]]}
    short = {**good, "specs": good["specs"][1:]}
    for garbage in (
        "{",
        "[]",
        '{"header": 1}',
        json.dumps({"header": slim._header(prefix), "records": 3}),
        json.dumps(wrong_row),  # a channel that is not text
        json.dumps(short),
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


# --- pip dist-infos (the same cache, `dists/`)


def _venv(root: Path) -> Path:
    site = root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.9\n")
    for name, version in (("alpha", "1.0"), ("beta", "2.5")):
        dist = site / f"{name}-{version}.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody\n")
        (dist / "INSTALLER").write_text("pip\n")
        (dist / "RECORD").write_text("")
    (site / "nameless.dist-info").mkdir()
    (site / "nameless.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\n\n")
    return site


def _pip(prefix: Path) -> tuple[dict[str, tuple[str, str, str]], tuple[str, ...]]:
    env = read_prefix(prefix)
    found = {
        p.name: (p.version, p.installer, p.origin.url if p.origin else "")
        for p in env.packages
        if p.manager == "pip"
    }
    return found, env.warnings


def test_unchanged_dist_infos_are_not_read_again(tmp_path: Path, aged: None, opened: list[str]) -> None:
    _venv(tmp_path / "venv")
    first = read_prefix(tmp_path / "venv")
    assert any(p.endswith("METADATA") for p in opened)  # cold: read
    opened.clear()
    assert read_prefix(tmp_path / "venv") == first
    assert [p for p in opened if ".dist-info" in p] == []  # warm: only stats
    assert any("without Name/Version" in w for w in first.warnings)  # the warning comes back from the cache


def test_dist_info_edits_additions_and_removals_are_seen(tmp_path: Path, aged: None) -> None:
    site = _venv(tmp_path / "venv")
    prefix = tmp_path / "venv"
    assert _pip(prefix)[0]["alpha"] == ("1.0", "pip", "")
    metadata = site / "alpha-1.0.dist-info" / "METADATA"
    before = metadata.stat()
    with open(metadata, "r+", encoding="utf-8") as handle:  # same inode, same size, mtime put back
        handle.write(metadata.read_text().replace("Version: 1.0", "Version: 1.9"))
    os.utime(metadata, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _pip(prefix)[0]["alpha"] == ("1.9", "pip", "")
    (site / "alpha-1.0.dist-info" / "direct_url.json").write_text(
        json.dumps({"url": "https://example.org/alpha-1.9.tar.gz", "archive_info": {}})
    )
    assert _pip(prefix)[0]["alpha"] == ("1.9", "pip", "https://example.org/alpha-1.9.tar.gz")
    (site / "beta-2.5.dist-info" / "INSTALLER").write_text("conda\n")  # conda's own from now on
    assert "beta" not in _pip(prefix)[0]
    (site / "beta-2.5.dist-info" / "INSTALLER").unlink()
    assert _pip(prefix)[0]["beta"] == ("2.5", "unknown", "")


def test_damaged_dist_cache_entries_are_read_again(tmp_path: Path, aged: None) -> None:
    _venv(tmp_path / "venv")
    prefix = tmp_path / "venv"
    expected = _pip(prefix)
    [entry] = (cache_dir() / "dists").glob("*.json")
    stored = json.loads(entry.read_text())
    key = next(k for k in stored["records"] if "alpha" in k)
    sign = stored["records"][key][0]
    for data in (
        {"skip": False, "warnings": []},
        {"skip": False, "warnings": [], "name": "alpha", "version": 1, "installer": "pip", "origin": None},
        {"skip": False, "warnings": [], "name": "alpha", "version": "1.0", "installer": "pip", "origin": 3},
        {"skip": False, "warnings": [3], "name": "alpha", "version": "1.0", "installer": "pip"},
        [1, 2],
    ):
        stored["records"][key] = [sign, data]
        entry.write_text(json.dumps(stored))
        assert _pip(prefix) == expected
