"""A package's cache row is encoded as the caches' json.dumps encodes it, whatever its text."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from envguard.cache import rows
from envguard.model import Package, PipOrigin

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10)


@given(
    st.lists(
        st.builds(
            Package,
            manager=st.sampled_from(["conda", "pip"]),
            name=_TEXT,
            version=_TEXT,
            build_number=st.integers(-(10**17), 10**17),
            url=_TEXT,
            origin=st.one_of(st.none(), st.builds(PipOrigin, url=_TEXT, editable=st.booleans(), vcs=_TEXT)),
            depends=st.lists(_TEXT, max_size=3).map(tuple),
        ),
        max_size=5,
    )
)
def test_property_rows_encode_as_json_dumps(packages: list[Package]) -> None:
    rows.forget()
    expected = [json.dumps(rows.row(p), separators=(",", ":")) for p in packages]
    assert rows.texts(packages) == expected
    assert [rows.package(json.loads(text)) for text in expected] == packages
