"""The pure core of `clean`: which entries go (classify), what they free (account), what records reference."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from envguard.clean.model import Cache, Candidate, Entry, FileFact, Usage
from envguard.clean.plan import account, classify
from envguard.clean.usage import record_references, strip_archive

CACHE = Cache(root=Path("/c"), pkgs=Path("/c"), kind="conda", origin="test")
NOW = 1_000_000.0


def entry(name: str, kind: str, dist: str = "", age: float = 86400) -> Entry:
    return Entry(CACHE, f"/c/{name}", kind, dist=dist, mtime=NOW - age)  # type: ignore[arg-type]


def decide(entries: list[Entry], usage: Usage, **kwargs: object) -> tuple[dict[str, str], dict[str, int]]:
    candidates, kept = classify(entries, usage, now=NOW, **kwargs)  # type: ignore[arg-type]
    return {c.entry.name: c.category for c in candidates}, kept


def test_classify_rules() -> None:
    usage = Usage(dists=frozenset({"a-1-0", "b-1-0"}), dir_names=frozenset({"c-1-0-f00d"}))
    entries = [
        entry("a-1-0", "package", "a-1-0"),
        entry("c-1-0-f00d", "package", "c-1-0"),
        entry("d-1-0", "package", "d-1-0"),
        entry("a-1-0.conda", "tarball", "a-1-0"),
        entry("b-1-0.conda", "tarball", "b-1-0"),
        entry("d-1-0.tar.bz2", "tarball", "d-1-0"),
        entry("x.json", "index"),
        entry("old.conda.partial", "partial"),
        entry("new.conda.partial", "partial", age=60),
        entry(".logs", "temp"),
        entry("urls.txt", "meta"),
        entry("stray", "other"),
    ]
    chosen, kept = decide(entries, usage)
    assert chosen == {
        "d-1-0": "unused-package",
        "a-1-0.conda": "tarball",
        "d-1-0.tar.bz2": "tarball",
        "x.json": "index-cache",
        "old.conda.partial": "partial-download",
        ".logs": "temp-log",
    }
    assert kept == {
        "package in use": 2,
        "tarball of a package in use, not extracted": 1,
        "recent temporary file (a running download?)": 1,
        "cache metadata (urls.txt, lock files)": 1,
        "not a package, tarball or known cache file": 1,
    }


def test_incomplete_usage_keeps_packages_and_tarballs_only() -> None:
    entries = [
        entry("d-1-0", "package", "d-1-0"),
        entry("d-1-0.conda", "tarball", "d-1-0"),
        entry("x.json", "index"),
    ]
    chosen, kept = decide(entries, Usage(complete=False))
    assert chosen == {"x.json": "index-cache"}
    assert kept == {
        "package kept: environment usage unknown": 1,
        "tarball kept: environment usage unknown": 1,
    }


def test_only_filters_categories() -> None:
    chosen, kept = decide(
        [entry("d-1-0", "package", "d-1-0"), entry("x.json", "index")], Usage(), only=["index-cache"]
    )
    assert chosen == {"x.json": "index-cache"} and kept == {"not selected (unused-package)": 1}


def fact(ino: int, nlink: int = 1, size: int = 100, is_dir: bool = False) -> FileFact:
    return FileFact(dev=1, ino=ino, nlink=nlink, size=size, blocks=(size + 4095) // 4096 * 8, is_dir=is_dir)


def candidate(name: str) -> Candidate:
    return Candidate(entry(name, "package", name), "unused-package", "test")


def test_account_counts_each_inode_once_and_links_outside_free_nothing() -> None:
    a = [fact(1, is_dir=True, size=4096), fact(2, nlink=2), fact(2, nlink=2), fact(3, nlink=2)]
    b = [fact(4, is_dir=True, size=4096), fact(3, nlink=2), fact(5, nlink=3)]
    first, second = account([(candidate("a"), a), (candidate("b"), b)])
    assert (first.bytes, first.disk_bytes, first.linked_elsewhere) == (4096 + 100 + 100, (8 + 8 + 8) * 512, 0)
    assert (second.bytes, second.linked_elsewhere) == (4096, 1), (
        "inode 3 went with a; inode 5 has a link outside"
    )


@given(
    st.lists(
        st.lists(st.tuples(st.integers(1, 12), st.integers(1, 4), st.integers(0, 10_000)), max_size=8),
        max_size=6,
    )
)
def test_account_never_counts_more_than_the_unique_inodes_fully_inside(
    raw: list[list[tuple[int, int, int]]],
) -> None:
    sizes: dict[int, tuple[int, int]] = {}
    measured = []
    for n, files in enumerate(raw):
        facts = []
        for ino, nlink, size in files:
            nlink, size = sizes.setdefault(ino, (nlink, size))
            facts.append(fact(ino, nlink=nlink, size=size))
        measured.append((candidate(f"p{n}"), facts))
    items = account(measured)
    occurrences: dict[int, int] = {}
    for _c, facts in measured:
        for f in facts:
            occurrences[f.ino] = occurrences.get(f.ino, 0) + 1
    expected = sum(size for ino, (nlink, size) in sizes.items() if occurrences.get(ino, 0) >= nlink)
    assert sum(i.bytes for i in items) == expected
    assert sum(i.bytes for i in account(list(reversed(measured)))) == expected


def test_record_references_of_conda_and_rattler_records(shared: Path) -> None:
    outputs = shared / "reference" / "conda-outputs"
    for name, folder in (
        ("conda_meta_record_conda_zlib.json", "zlib-1.3.1-h4ab18f5_1"),
        ("conda_meta_record_rattler_zlib.json", "zlib-1.3.1-h4ab18f5_1"),
    ):
        dists, folders = record_references(json.loads((outputs / name).read_text()))
        assert dists == {"zlib-1.3.1-h4ab18f5_1"} and folders == {folder}
    old = {
        "name": "six",
        "version": "1.10.0",
        "build": "py27_0",
        "url": "https://x/free/linux-64/six-1.10.0-py27_0.tar.bz2",
        "link": {"source": "/opt/pkgs/six-1.10.0-py27_0-abcdef/", "type": 2},
    }
    assert record_references(old) == ({"six-1.10.0-py27_0"}, {"six-1.10.0-py27_0-abcdef"})


def test_strip_archive() -> None:
    assert strip_archive("a-1-0.conda") == "a-1-0" and strip_archive("a-1-0.tar.bz2") == "a-1-0"
    assert strip_archive("a-1-0") == "a-1-0"
