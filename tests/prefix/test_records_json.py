"""A conda-meta record's JSON is read as json.loads reads it: the same value, or the same error."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from envguard.prefix.records import decode_json


def _outcome(call: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "value", call(data)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


_JSONISH = st.sampled_from(['{"a": 1}', "{}", "{", '{"a": [1, 2.5, null, true]}', "[]", "1", '"x"', " ", ""])
_TAILS = st.sampled_from(["", " ", "\n", "\t\r\n ", "x", "}", " {}", "\x00", "\u00a0", "\ufeff"])


@settings(max_examples=400)
@given(_JSONISH, _TAILS, st.sampled_from(["utf-8", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"]))
def test_property_records_decode_as_json_loads(text: str, tail: str, encoding: str) -> None:
    data = (text + tail).encode(encoding, "surrogatepass")
    assert _outcome(decode_json, data) == _outcome(json.loads, data)


@given(st.binary(max_size=40))
def test_property_any_bytes_decode_as_json_loads(data: bytes) -> None:
    assert _outcome(decode_json, b"{" + data) == _outcome(json.loads, b"{" + data)
    assert _outcome(decode_json, data) == _outcome(json.loads, data)


def test_a_record_object_with_its_fields() -> None:
    record = {"name": "zlib", "version": "1.3.1", "depends": ["libgcc >=13"], "size": 10, "é": "\u2028"}
    data = json.dumps(record, indent=2).encode() + b"\n"
    assert decode_json(data) == record
