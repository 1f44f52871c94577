"""Hypothesis strategies for hostile input: arbitrary JSON values, lines built from the fragments that broke
parsers before (Unicode digits, huge numbers, malformed IPv6 hosts, credentials, deep nesting)."""

from __future__ import annotations

import copy
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


LOCK_DATA: dict[str, Any] = {
    "version": 1,
    "metadata": {
        "content_hash": {"linux-64": "abc"},
        "channels": [{"url": "conda-forge", "used_env_vars": []}],
        "platforms": ["linux-64"],
        "sources": ["environment.yml"],
        "custom_metadata": {},
    },
    "package": [
        {
            "name": "zlib",
            "version": "1.3.1",
            "manager": "conda",
            "platform": "linux-64",
            "dependencies": {"libgcc": ">=13"},
            "url": "https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-h0_0.conda",
            "hash": {"md5": "0" * 32, "sha256": "a" * 64},
            "category": "main",
            "optional": False,
        },
        {
            "name": "requests",
            "version": "2.31.0",
            "manager": "pip",
            "platform": "linux-64",
            "dependencies": {},
            "url": "https://files.pythonhosted.org/requests-2.31.0-py3-none-any.whl",
            "hash": {"sha256": "b" * 64},
        },
    ],
}
RECORD: dict[str, Any] = {
    "name": "zlib",
    "version": "1.3.1",
    "build": "h0_0",
    "build_number": 0,
    "channel": "https://conda.anaconda.org/conda-forge/linux-64",
    "subdir": "linux-64",
    "url": "https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-h0_0.conda",
    "depends": ["libgcc >=13"],
    "requested_specs": ["zlib"],
    "files": ["lib/libz.so"],
    "paths_data": {"paths_version": 1, "paths": [{"_path": "lib/libz.so", "path_type": "hardlink"}]},
}


def mutate(data: Any, path: list[Any], value: Any) -> Any:
    """A deep copy of `data` with the value at `path` (keys/indexes, the last one created) set to `value`."""
    out = copy.deepcopy(data)
    node = out
    for key in path[:-1]:
        node = node[key]
    if isinstance(node, list):
        node[path[-1] % len(node)] = value
    else:
        node[path[-1]] = value
    return out


LOCK_PATHS = st.sampled_from(
    [["version"], ["metadata"], ["package"]]
    + [["metadata", k] for k in (*LOCK_DATA["metadata"], "inputs_metadata")]
    + [["package", i, k] for i in (0, 1) for k in (*LOCK_DATA["package"][0], "source", "build")]
    + [["package", 0, "hash", "md5"], ["package", 0, "dependencies", "x"], ["metadata", "channels", 0]]
    + [["metadata", "custom_metadata", k] for k in ("envguard.linux-64.virtual", "envguard.linux-64.pip")]
)
