"""Hypothesis strategies for hostile input: arbitrary JSON values, lines built from the fragments that broke
parsers before (Unicode digits, huge numbers, malformed IPv6 hosts, credentials, deep nesting)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
)
JSON: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
FRAGMENTS = st.sampled_from(
    [
        "https://",
        "http://[::1",
        "http://[fe80::1%zz]:x/",
        "file:///",
        "u:PW@",
        "/t/tok-123/",
        "conda-forge/linux-64/",
        "zlib-1.3.1-h0_0.conda",
        ".tar.bz2",
        "#",
        "sha256:",
        "0" * 32,
        "a" * 64,
        "\u0663",
        "9" * 40,
        "@EXPLICIT",
        "# platform: linux-64",
        "::",
        "==",
        ">=1,<2",
        " ",
        "\t",
        "-",
        "[",
        "]",
        "not ",
        "# [linux]",
        "- ",
        "pip:",
        "--extra-index-url=",
        " @ ",
        "git+https://",
        "${HOME}",
        "{{",
        "{%",
        "\x00",
        "\ufeff",
        "é",
    ]
)
LINE = st.lists(FRAGMENTS | st.text(max_size=8), max_size=8).map("".join)
TEXT = st.lists(LINE, max_size=12).map("\n".join)


def as_json(value: Any) -> str:
    """`value` as JSON text (NaN/Infinity included, as Python writes them)."""
    return json.dumps(value)
