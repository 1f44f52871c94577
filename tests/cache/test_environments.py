"""The whole-environment cache: an unchanged prefix is served without reading a record, the served
Environment is the one a fresh read builds, and any change (a pip install, a record edited in place, the
history, other virtual packages) reads the prefix again. Damaged entries, a read racing a change, just-made
prefixes and the off switch never serve or store anything stale."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from envguard.cache import cache_dir
from envguard.cache import environments as envcache
from envguard.cache import records as slim
from envguard.model import VirtualPackage
from envguard.prefix import reader
from envguard.prefix.reader import read_prefix
from tests.helpers import MakePrefix, pip_install

SIX_REQUESTED = "==> 2026-12-01 12:00:00 <==\n# cmd: conda install six\n# update specs: ['six']\n"
CUDA = (VirtualPackage("__cuda", "12.4"), VirtualPackage("__glibc", "2.36"))


@pytest.fixture
def aged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled at once (the real 2 s rule has its own test)."""
    monkeypatch.setattr(slim, "FRESH_NS", -(10**12))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every prefix the conda reader really read with the caches on (not served from the cache)."""
    seen: list[Path] = []
    real = reader.read_conda

    def counting(prefix: Path, virtual: tuple[VirtualPackage, ...] = ()) -> object:
        if slim.enabled():  # not _fresh's own reads
            seen.append(prefix)
        return real(prefix, virtual)

    monkeypatch.setattr(reader, "read_conda", counting)
    return seen


def _fresh(
    prefix: Path, monkeypatch: pytest.MonkeyPatch, virtual: tuple[VirtualPackage, ...] = CUDA
) -> object:
    with monkeypatch.context() as patch:
        patch.setenv("ENVGUARD_RECORD_CACHE", "0")
        return read_prefix(prefix, virtual)


def _entries() -> list[Path]:
    return sorted((cache_dir() / "envs").glob("*.json"))


@pytest.fixture
def prefix(make_prefix: MakePrefix, channels: dict[str, Path]) -> Path:
    made = make_prefix(
        ["python=3.11", "numpy=1.26", "pytorch=2.1.0=*cuda11.8*", "requests=2.32.3"], cuda="12.4"
    )
    pip_install(made, str(channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl"))
    return made


def test_an_unchanged_prefix_is_served_as_a_fresh_read_builds_it(
    prefix: Path, aged: None, reads: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = read_prefix(prefix, CUDA)
    assert len(reads) == 1 and len(_entries()) == 1
    served = read_prefix(prefix, CUDA)
    assert len(reads) == 1, "an unchanged prefix was read again"
    assert served == first == _fresh(prefix, monkeypatch)
    assert any(p.manager == "pip" for p in served.packages) and served.cuda.driver == "12.4"


def test_any_change_reads_the_prefix_again(
    prefix: Path, aged: None, reads: list[Path], monkeypatch: pytest.MonkeyPatch, channels: dict[str, Path]
) -> None:
    read_prefix(prefix, CUDA)
    meta = prefix / "conda-meta"
    record = next(meta.glob("requests-*.json"))
    changes = [
        lambda: pip_install(prefix, str(channels["wheels"] / "other_pkg-0.3.0-py3-none-any.whl")),
        # the same size, written in place: only ctime tells
        lambda: record.write_text(record.read_text().replace('"2.32.3"', '"2.32.9"', 1)),
        lambda: (meta / "history").write_text((meta / "history").read_text() + "# +conda-forge::six\n"),
    ]
    for number, change in enumerate(changes, start=2):
        change()
        served = read_prefix(prefix, CUDA)
        assert len(reads) == number, f"change {number - 1} was not seen"
        assert served == _fresh(prefix, monkeypatch)
    assert read_prefix(prefix, CUDA).get("requests") is not None and len(reads) == 4
    assert read_prefix(prefix, CUDA).get("requests").version == "2.32.9"  # type: ignore[union-attr]
    other = read_prefix(prefix, ())  # other virtual packages: another CUDA summary, read again
    assert len(reads) == 5 and other.cuda.driver is None and other == _fresh(prefix, monkeypatch, ())


def _with_payload(text: str, payload: str) -> str:
    header, fingerprint, _crc = json.loads(text.split("\n", 1)[0])
    return json.dumps([header, fingerprint, zlib.crc32(payload.encode())]) + "\n" + payload


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],
        lambda text: "not json",
        lambda text: text.replace('"numpy"', '"numpz"'),  # the payload changed, its CRC did not
        lambda text: _with_payload(text, "[1, 2]"),  # a payload of another shape, with its own CRC
    ],
    ids=["truncated", "garbage", "crc", "shape"],
)
def test_a_damaged_entry_is_a_miss(
    prefix: Path, aged: None, reads: list[Path], monkeypatch: pytest.MonkeyPatch, damage: object
) -> None:
    read_prefix(prefix, CUDA)
    (entry,) = _entries()
    entry.write_text(damage(entry.read_text()))  # type: ignore[operator]
    assert read_prefix(prefix, CUDA) == _fresh(prefix, monkeypatch) and len(reads) == 2


def test_a_change_during_the_read_is_never_served(
    prefix: Path, aged: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = prefix / "conda-meta" / "history"
    real = reader.read_conda

    def racing(where: Path, virtual: tuple[VirtualPackage, ...] = ()) -> object:
        env = real(where, virtual)
        history.write_text(history.read_text() + SIX_REQUESTED)  # what the stored read did not see
        return env

    monkeypatch.setattr(reader, "read_conda", racing)
    stale = read_prefix(prefix, CUDA)
    assert "six" not in str(stale.requested)
    monkeypatch.setattr(reader, "read_conda", real)
    # the entry was stored under the fingerprint taken before the read, which the prefix no longer has
    served = read_prefix(prefix, CUDA)
    assert served == _fresh(prefix, monkeypatch) and "six" in str(served.requested)


def test_just_made_prefixes_and_the_off_switch_store_nothing(
    prefix: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_prefix(prefix, CUDA)  # the real 2 s rule: every file here is younger
    assert _entries() == []
    monkeypatch.setattr(slim, "FRESH_NS", -(10**12))
    monkeypatch.setenv("ENVGUARD_RECORD_CACHE", "0")
    read_prefix(prefix, CUDA)
    assert _entries() == []


def test_at_most_max_entries_prefixes_are_kept(
    make_prefix: MakePrefix, aged: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(envcache, "MAX_ENTRIES", 2)
    made = [make_prefix(["zlib"], name=f"env{i}") for i in range(4)]
    for where in made:
        read_prefix(where)
    assert _entries() == sorted(envcache._entry_path(p) for p in made[2:])  # the newest two


def test_readers_with_and_without_virtual_packages_do_not_evict_each_other(
    prefix: Path, aged: None, reads: list[Path]
) -> None:
    """export reads without virtual packages, diff and check with the machine's: one entry each."""
    with_cuda, without = read_prefix(prefix, CUDA), read_prefix(prefix, ())
    assert len(reads) == 2 and len(_entries()) == 2
    assert read_prefix(prefix, CUDA) == with_cuda and read_prefix(prefix, ()) == without
    assert len(reads) == 2, "one read evicted the other's entry"


def test_both_caches_read_back_as_a_fresh_read(
    prefix: Path, aged: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole-environment entry and the record cache's entry each decode back to what a read with the
    caches off builds."""
    fresh = _fresh(prefix, monkeypatch)
    assert read_prefix(prefix, CUDA) == fresh  # cold: both entries written
    assert read_prefix(prefix, CUDA) == fresh  # served from the whole-environment entry
    for entry in _entries():
        entry.unlink()
    assert read_prefix(prefix, CUDA) == fresh  # every record from the record cache
    [records] = (cache_dir() / "records").glob("*.json")
    _head, stored = json.loads(records.read_text())
    assert len(stored) == sum(p.manager == "conda" for p in fresh.packages)
