"""Every field of a conda-meta record's paths_data entries is type-checked: the hot per-file check in
records.check_record must cover each PATH_FIELDS field exactly as check_fields does (same verdict, same
message), including bounds on integers and values of other JSON types."""

from __future__ import annotations

from typing import Any

import pytest

from envguard.errors import BadInputError
from envguard.prefix.records import PATH_FIELDS, RECORD_FIELDS, check_record
from envguard.validate import check_fields

WRONG: dict[str, list[Any]] = {
    "str": [5, 1.5, True, False, 0, [], {}, ["x"]],
    "int": ["5", 1.5, True, False, [], {}, 10**18, -(10**18), 10**40],
    "list[str]": ["x", "", 0, {}, [1], ["x", 2], [None], [["x"]]],
    "dict": ["x", "", 0, [], [{}], False],
}
RIGHT: dict[str, list[Any]] = {
    "str": ["", "x"],
    "int": [0, -1, 10**18 - 1, -(10**18) + 1],
    "list[str]": [[], ["x"], ["", "y"]],
    "dict": [{}, {"paths": []}],
}


def _record(entry: dict[str, Any]) -> dict[str, Any]:
    base = {"_path": "lib/libz.so", "path_type": "hardlink"}
    return {
        "name": "zlib",
        "version": "1.3.1",
        "paths_data": {"paths_version": 1, "paths": [base, {**base, **entry}]},
    }


def _verdict(call: Any, *args: Any) -> str:
    try:
        call(*args)
    except BadInputError as exc:
        return str(exc)
    return "ok"


@pytest.mark.parametrize(("field", "kind"), sorted(PATH_FIELDS.items()))
def test_every_path_field_is_checked_as_check_fields_checks_it(field: str, kind: str) -> None:
    cases = [(value, False) for value in WRONG[kind]] + [(value, True) for value in [*RIGHT[kind], None]]
    for value, valid in cases:
        entry = {"_path": "lib/libz.so", "path_type": "hardlink", field: value}
        expected = _verdict(check_fields, entry, PATH_FIELDS, "r.json: paths_data entry", "x")
        got = _verdict(check_record, _record({field: value}), "r.json")
        assert (expected == "ok") == valid, (field, value, expected)  # the reference agrees with the table
        if valid:
            assert got == "ok", (field, value, got)
        else:
            assert got.startswith("r.json: paths_data entry: field " + repr(field)), (field, value, got)


@pytest.mark.parametrize(("field", "kind"), sorted(RECORD_FIELDS.items()))
def test_every_record_field_is_checked_as_check_fields_checks_it(field: str, kind: str) -> None:
    """check_record's kind-at-a-time pass gives check_fields' verdict and message for every record field."""
    for value, valid in [(value, False) for value in WRONG[kind]] + [(v, True) for v in [*RIGHT[kind], None]]:
        record = {"name": "zlib", "version": "1.3.1", "build": "h0_0", "depends": ["libc"], field: value}
        expected = _verdict(
            check_fields, record, RECORD_FIELDS, "r.json", "reinstall that package or remove the file"
        )
        assert (expected == "ok") == valid, (field, value, expected)
        if field == "paths_data" and valid and value:
            continue  # its entries have their own test above
        assert _verdict(check_record, record, "r.json") == expected, (field, value)
