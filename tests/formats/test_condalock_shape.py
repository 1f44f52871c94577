"""The lock shape `envguard lock` writes, read an entry at a time: exactly PyYAML's document, or declined."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envguard.errors import BadInputError
from envguard.formats.condalock import read, shape
from envguard.formats.condalock.write import render_lock
from envguard.model import Package, PipOrigin, make_environment
from tests.formats.oracle import pyyaml


def _agrees(text: str) -> bool:
    """shape's own reading either declines (None) or is exactly PyYAML's document; True when it read it."""
    got = shape._load(text)
    if got is None:
        return False
    ok, expected = pyyaml(text)
    assert ok and got == expected, (text, got, expected)
    assert repr(got) == repr(expected), text  # the same types and key order inside
    return True


def _lock(packages: list[Package]) -> str:
    env = make_environment(kind="prefix", source="p", platform="linux-64", packages=packages)
    return render_lock(
        {"linux-64": env}, sources=[], content_hashes={"linux-64": "0" * 64}, source_kind="prefix"
    )


def _conda(name: str, version: str, build: str, depends: tuple[str, ...] = ()) -> Package:
    url = f"https://conda.anaconda.org/conda-forge/linux-64/{name}-{version}-{build}.conda"
    return Package(
        "conda",
        name,
        version,
        build,
        0,
        "conda-forge",
        "linux-64",
        url,
        "a" * 32,
        "b" * 64,
        "",
        None,
        depends,
    )


WRITTEN = [
    _conda("python", "3.11.7", "h0_0_cpython", ("libgcc >=13", "openssl >=3.0,<4.0a0", "tzdata")),
    _conda("numpy", "1.10", "py311h0_0", ("python >=3.11,<3.12.0a0", "__glibc >=2.17")),  # `1.10` quoted
    _conda("zlib", "1.3.1", "h4ab18f5_1"),  # no dependencies: `{}`
    _conda("yes", "0", "0"),  # name, version and build YAML reads as a bool and ints: quoted
    Package("pip", "requests", "2.31.0", url="https://h/requests-2.31.0-py3-none-any.whl", sha256="c" * 64),
    Package("pip", "local-thing", "0.1", origin=PipOrigin(url="file:")),  # `name==version`, no hash: `{}`
]


def test_reads_the_lock_envguard_writes_itself_as_pyyaml_does() -> None:
    assert _agrees(_lock(WRITTEN))


def test_reads_a_lock_envguard_writes_into_the_same_environment() -> None:
    text = _lock(WRITTEN)
    fast = read.parse(text, "a.lock.yml")
    shape_load = shape._load
    try:
        shape._load = lambda text: None  # type: ignore[assignment]
        slow = read.parse(text, "a.lock.yml")
    finally:
        shape._load = shape_load  # type: ignore[assignment]
    assert fast == slow


_WORDS = st.sampled_from(
    ["1.10", "yes", "null", "~", "1_000", "0x1F", "2024-01-02", "a b", "a: b", "x#y", "é", ""]
)
_VALUE = st.one_of(
    _WORDS,
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
)

_KEY = st.one_of(_WORDS, st.from_regex(r"[a-z0-9_][a-z0-9_.-]{0,8}", fullmatch=True), _VALUE)


@settings(max_examples=300)
@given(st.lists(st.tuples(_VALUE, _VALUE, _VALUE, st.dictionaries(_KEY, _VALUE, max_size=3)), max_size=3))
def test_property_any_values_in_the_written_shape_read_as_pyyaml(entries) -> None:
    """Every entry envguard's writer could lay out, any text in its values: PyYAML's document, or declined."""
    from envguard.formats.condalock.write import package_entry
    from envguard.formats.yaml import dump

    document = {"version": 1, "package": []}
    for name, version, build, depends in entries:
        package = Package("conda", name, version, build, url=f"https://h/{build}", md5="a" * 32)
        entry = package_entry(package, "linux-64")
        entry["dependencies"] = depends
        document["package"].append(entry)
    text = dump(document)
    if document["package"]:
        _agrees(text)
    assert shape.load(text) in (None, pyyaml(text)[1])  # None: PyYAML reads it


_EDITS = st.sampled_from(
    [
        "  version: 1.2",
        "  version: '1.2'",
        "  version: 1.2.3 # note",
        "  optional: no",
        "  optional: true",
        "  category: dev",
        "  hash: {}",
        "  hash:",
        "    sha256: 1234",
        "    md5: 0123",
        "  dependencies: {}",
        "    on: '>=1'",
        "    '1': x",
        "  # a comment",
        "",
        "  build: 'x''y'",
        "  build: x:",
        '  build: "q"',
        "- name: other",
        "  extra: 1",
        "  url: a b",
    ]
)


@settings(max_examples=500)
@given(st.lists(st.tuples(st.integers(0, 60), st.booleans(), _EDITS), max_size=3))
def test_property_edited_locks_read_as_pyyaml_or_declined(edits) -> None:
    """A written lock with lines replaced or inserted: exactly PyYAML's document, or declined."""
    lines = _lock(WRITTEN[:3]).split("\n")
    for at, replace, line in edits:
        at = min(at, len(lines) - 1)
        lines[at : at + replace] = [line]
    _agrees("\n".join(lines))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("  manager: conda", "  manager: mamba"),
        ("    md5: " + "a" * 32, "    md5: xyz"),
        ("- name: numpy", "- name: '../numpy'"),
        ("  version: 1.3.1", "  version: '1.3.1/..'"),
        ("  optional: false\n- name: zlib", "  optional: false\n- nam: zlib"),
    ],
)
def test_bad_entries_get_the_same_message_either_way(old: str, new: str) -> None:
    text = _lock(WRITTEN[:3])
    assert old in text
    bad = text.replace(old, new, 1)
    with pytest.raises(BadInputError) as fast:
        read.parse(bad, "b.lock.yml")
    shape_load = shape._load
    try:
        shape._load = lambda text: None  # type: ignore[assignment]
        with pytest.raises(BadInputError) as slow:
            read.parse(bad, "b.lock.yml")
    finally:
        shape._load = shape_load  # type: ignore[assignment]
    assert str(fast.value) == str(slow.value)


@given(st.one_of(_WORDS, st.from_regex(r"[-+.0-9a-zA-Z_:~!&*<=]{1,12}", fullmatch=True), _VALUE))
def test_property_only_typed_starts_are_ever_typed(text: str) -> None:
    """A plain scalar YAML reads as anything but text starts with one of TYPED_STARTS (the reader asks
    implicit_type about those alone)."""
    from envguard.formats.yaml import TYPED_STARTS, implicit_type

    assert implicit_type(text) is None or text == "" or text[0] in TYPED_STARTS
