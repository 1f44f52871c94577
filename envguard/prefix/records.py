"""conda-meta records (JSON dicts) and rattler records as envguard Packages; reading a prefix's records."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from envguard.channels import channel_from_url, normalize, strip_credentials
from envguard.errors import BadInputError, OperationalError
from envguard.model import Package
from envguard.textio import read_bytes
from envguard.validate import MAX_INT_DIGITS, Kind, check_fields, matches


def iter_records(prefix: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Yield (path, record) for each `conda-meta/*.json`; a corrupt record is bad input naming the file."""
    meta = prefix / "conda-meta"
    try:
        names = sorted(n for n in os.listdir(meta) if n.endswith(".json"))
    except OSError as exc:
        raise BadInputError(
            f"{meta}: cannot list ({exc.strerror}); is {prefix} a conda environment?"
        ) from exc
    for name in names:
        path = meta / name
        yield path, load_record(path)


def load_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """One conda-meta record, validated enough to be used. A prefix read passes a str: a Path made for each of
    300 records costs ~4 ms more (measured, alternating)."""
    try:
        data = _parse(path)
    except ValueError as exc:
        data = _written(path, exc)
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("name", "version")):
        raise BadInputError(
            f"{path}: conda-meta record lacks name/version (truncated?); reinstall that package or remove "
            "the file"
        )
    check_record(data, path)
    return data


WRITING_S = 10.0  # a record younger than this that is not valid JSON is being written: conda writes in place
_PAUSES = (0.1, 0.2, 0.4, 0.8)


def _parse(path: str | os.PathLike[str]) -> Any:
    try:
        data = read_bytes(path)
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror}); check permissions") from exc
    return decode_json(data)


# the C scanner json.loads runs, with json.loads' settings (an instance attribute the stubs do not name)
_SCAN: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]


def decode_json(data: bytes) -> Any:
    """json.loads(data), its value or its error. A UTF-8 object (every real record) goes to the scanner
    directly: json.loads' own steps around it (the encoding sniffed, two whitespace matches, the calls)
    were ~1.5 us of each record's ~8."""
    if data[:1] == b"{" and data[1:2] != b"\x00":  # what json.detect_encoding reads as UTF-8
        text = data.decode("utf-8", "surrogatepass")
        try:
            value, end = _SCAN(text, 0)
        except (StopIteration, ValueError):
            return json.loads(data)  # raises the error json.loads gives
        if end == len(text) or not text[end:].strip(" \t\n\r"):
            return value
    return json.loads(data)


def _written(path: str | os.PathLike[str], exc: ValueError) -> Any:
    """A record that did not parse: read again while it is young (conda writes records in place, so a
    reader can meet half of one); still not JSON, it is being written (exit 3) or corrupt (exit 2)."""
    for pause in _PAUSES:
        age = _age(path)
        if age is None or age > WRITING_S:
            break
        time.sleep(pause)
        try:
            return _parse(path)
        except ValueError as again:
            exc = again
    age = _age(path)
    if age is not None and age <= WRITING_S:
        raise OperationalError(
            f"{path}: conda-meta record is being written (changed {age:.1f} s ago and not complete yet): an "
            "install is running in this environment; run this again once it has finished"
        ) from exc
    line = getattr(exc, "lineno", None)
    at = f":{line}" if line else ""
    raise BadInputError(
        f"{path}{at}: corrupt conda-meta record ({_short(exc)}); reinstall that package or remove the file"
    ) from exc


def _age(path: str | os.PathLike[str]) -> float | None:
    try:
        return max(0.0, time.time() - os.stat(path).st_mtime)
    except OSError:
        return None


RECORD_FIELDS: dict[str, Kind] = {
    "name": "str",
    "version": "str",
    "build": "str",
    "build_string": "str",
    "build_number": "int",
    "channel": "str",
    "subdir": "str",
    "url": "str",
    "fn": "str",
    "md5": "str",
    "sha256": "str",
    "size": "int",
    "depends": "list[str]",
    "constrains": "list[str]",
    "requested_specs": "list[str]",
    "requested_spec": "str",
    "files": "list[str]",
    "paths_data": "dict",
    "link": "dict",
    "extracted_package_dir": "str",
}
PATH_FIELDS: dict[str, Kind] = {
    "_path": "str",
    "path_type": "str",
    "sha256": "str",
    "sha256_in_prefix": "str",
    "size_in_bytes": "int",
    "file_mode": "str",
}
_FIX = "reinstall that package or remove the file"


def check_record(data: dict[str, Any], path: object) -> None:
    """Every field envguard reads from a conda-meta record has its JSON type (bad input naming the field)."""
    check_fields(data, RECORD_FIELDS, path, _FIX)
    paths = (data.get("paths_data") or {}).get("paths")
    if paths is None:
        return
    if not matches(paths, "list[dict]"):
        raise BadInputError(f"{path}: field 'paths_data.paths' must be a list of mappings; {_FIX}")
    # One entry per file (15,000 in a pytorch record): each PATH_FIELDS field is checked inline (a loop over
    # the schema costs 3x as much); an entry that fails goes through check_fields, which names the field.
    # test_records_schema checks every PATH_FIELDS field is covered here.
    for entry in paths:
        get = entry.get
        a, b, c, d, e = (
            get("_path"),
            get("path_type"),
            get("sha256"),
            get("sha256_in_prefix"),
            get("file_mode"),
        )
        size = get("size_in_bytes")
        if (
            (a is not None and a.__class__ is not str)
            or (b is not None and b.__class__ is not str)
            or (c is not None and c.__class__ is not str)
            or (d is not None and d.__class__ is not str)
            or (e is not None and e.__class__ is not str)
            or (size is not None and (size.__class__ is not int or not -_INT_BOUND < size < _INT_BOUND))
        ):
            check_fields(entry, PATH_FIELDS, f"{path}: paths_data entry", _FIX)


_INT_BOUND = 10**MAX_INT_DIGITS  # what matches(value, "int") accepts: at most MAX_INT_DIGITS digits


def _short(exc: ValueError) -> str:
    """The parser's whole message on one line, position included (`Invalid control character at: line 1
    column 15 (char 14)`), bounded."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."


def record_to_package(record: dict[str, Any]) -> Package:
    """Map a conda-meta record (or repodata record) to a Package."""
    url = str(record.get("url") or "")
    channel = str(record.get("channel") or "")
    subdir = str(record.get("subdir") or "")
    if url:
        url_channel, url_subdir = channel_from_url(url)
        channel = url_channel or normalize(channel)
        subdir = subdir or url_subdir
    else:
        channel = normalize(channel)

    return Package(
        manager="conda",
        name=record["name"],
        version=record["version"],
        build=str(record.get("build") or record.get("build_string") or ""),
        build_number=int(record.get("build_number") or 0),
        channel=channel,
        subdir=subdir,
        url=strip_credentials(url),
        md5=str(record.get("md5") or ""),
        sha256=str(record.get("sha256") or ""),
        depends=tuple(record.get("depends") or ()),
    )


def converted(record: dict[str, Any]) -> tuple[Package, list[str]]:
    """A checked conda-meta record's Package and the specs it says were requested (`requested_specs`, else
    the older `requested_spec`)."""
    specs = record.get("requested_specs") or (
        [record["requested_spec"]] if record.get("requested_spec") else []
    )
    return record_to_package(record), [str(spec) for spec in specs]


def rattler_to_package(record: Any) -> Package:
    """A rattler RepoDataRecord (or PrefixRecord) as an envguard Package."""
    url = strip_credentials(str(record.url))
    channel, subdir = channel_from_url(url)
    md5 = record.md5.hex() if record.md5 else ""
    sha256 = record.sha256.hex() if record.sha256 else ""
    return Package(
        manager="conda",
        name=record.name.normalized,
        version=str(record.version),
        build=str(record.build),
        build_number=int(record.build_number),
        channel=channel or normalize(strip_credentials(str(record.channel or ""))),
        subdir=str(record.subdir or subdir),
        url=url,
        md5=md5,
        sha256=sha256,
        depends=tuple(record.depends or ()),
    )
