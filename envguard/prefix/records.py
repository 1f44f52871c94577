"""conda-meta records and rattler records as envguard Packages; reading a prefix's records.

A record is decoded by msgspec into a Struct of the fields envguard uses (`Record`: what the model takes, for
the prefix reader; `WholeRecord`: with the file lists, for whoever reads those), so a wrongly typed field is
bad input naming the file and the field's path (`corrupt conda-meta record …/x.json: $.version: Expected
`str`, got `int``). The rest of a record (over 90% of its bytes are `files` and `paths_data`) is skipped
unread where only the package is wanted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from envguard.channels import channel_from_url, normalize, strip_credentials
from envguard.errors import BadInputError, OperationalError
from envguard.model import Package
from envguard.textio import read_bytes
from envguard.validate import identity_problem


class Record(msgspec.Struct, frozen=True):
    """What the model takes of a conda-meta record (None: the field is absent or null)."""

    name: str
    version: str
    build: str | None = None
    build_string: str | None = None
    build_number: int | None = None
    channel: str | None = None
    subdir: str | None = None
    url: str | None = None
    md5: str | None = None
    sha256: str | None = None
    depends: list[str] | None = None
    requested_specs: list[str] | None = None
    requested_spec: str | None = None


class PathEntry(msgspec.Struct, frozen=True):
    """One `paths_data.paths` entry."""

    path: str | None = msgspec.field(default=None, name="_path")
    path_type: str | None = None
    sha256: str | None = None
    sha256_in_prefix: str | None = None
    size_in_bytes: int | None = None
    file_mode: str | None = None


class PathsData(msgspec.Struct, frozen=True):
    paths: list[PathEntry] | None = None


class WholeRecord(Record, frozen=True):
    """A record with the other fields envguard reads somewhere (file integrity, clean, the SBOM)."""

    fn: str | None = None
    size: int | None = None
    constrains: list[str] | None = None
    files: list[str] | None = None
    paths_data: PathsData | None = None
    link: dict[str, Any] | None = None
    extracted_package_dir: str | None = None


_T = TypeVar("_T", Record, WholeRecord)
_DECODERS: dict[type[Any], msgspec.json.Decoder[Any]] = {
    Record: msgspec.json.Decoder(Record),
    WholeRecord: msgspec.json.Decoder(WholeRecord),
}
_FIX = "reinstall that package or remove the file"


def iter_records(prefix: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Yield (path, record) for each `conda-meta/*.json` in name order: the whole record as plain data, its
    fields checked (`load_record`)."""
    for path in record_paths(prefix):
        yield Path(path), load_record(path)


def record_paths(prefix: Path) -> list[str]:
    """Every `conda-meta/*.json` of a prefix, in name order (an unlistable conda-meta is bad input); text, not
    Paths: a Path per record costs ~5 us, 15 ms for 3,000 records."""
    meta = prefix / "conda-meta"
    try:
        names = sorted(n for n in os.listdir(meta) if n.endswith(".json"))
    except OSError as exc:
        raise BadInputError(
            f"{meta}: cannot list ({exc.strerror}); is {prefix} a conda environment?"
        ) from exc
    folder = os.path.join(meta, "")
    return [folder + name for name in names]


def read_record(path: str | os.PathLike[str], kind: type[_T] = Record) -> _T:  # type: ignore[assignment]
    """One conda-meta record as `kind` (bad input naming the file and the field's path)."""
    return decode_record(_parse(path), path, kind)


def load_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """One whole conda-meta record as plain data, every field envguard reads checked (`WholeRecord`)."""
    data = _parse(path)
    decode_record(data, path, WholeRecord)
    try:
        value: dict[str, Any] = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:  # the typed read skips unknown keys unchecked (bytes not UTF-8)
        raise BadInputError(f"corrupt conda-meta record {path}: {exc}; {_FIX}") from exc
    return value


def decode_record(data: bytes, path: str | os.PathLike[str], kind: type[_T]) -> _T:
    """A record's bytes as `kind`; a record still being written is read again for a moment."""
    try:
        return _DECODERS[kind].decode(data)  # type: ignore[no-any-return]
    except msgspec.ValidationError as exc:
        where, _, what = str(exc).partition(" - at `")
        at = what.rstrip("`") or "$"
        raise BadInputError(f"corrupt conda-meta record {path}: {at}: {where}; {_FIX}") from exc
    except msgspec.DecodeError as exc:
        return decode_record(_written(path, exc), path, kind)


WRITING_S = 10.0  # a record younger than this that is not valid JSON is being written: conda writes in place
_PAUSES = (0.1, 0.2, 0.4, 0.8)


def _parse(path: str | os.PathLike[str]) -> bytes:
    try:
        return read_bytes(path)
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror}); check permissions") from exc


def _written(path: str | os.PathLike[str], exc: msgspec.DecodeError) -> bytes:
    """The bytes of a record that did not parse, read again while it is young (conda writes records in
    place, so a reader can meet half of one); still cut short, it is being written (exit 3); JSON that is
    complete but malformed (`Infinity`, trailing bytes) is corrupt (exit 2) at once."""
    for pause in _PAUSES:
        if not _cut_short(exc):
            break
        age = _age(path)
        if age is None or age > WRITING_S:
            break
        time.sleep(pause)
        data = _parse(path)
        try:
            msgspec.json.decode(data)
            return data
        except msgspec.DecodeError as again:
            exc = again
    age = _age(path)
    if age is not None and age <= WRITING_S and _cut_short(exc):
        raise OperationalError(
            f"{path}: conda-meta record is being written (changed {age:.1f} s ago and not complete yet): an "
            "install is running in this environment; run this again once it has finished"
        ) from exc
    raise BadInputError(f"corrupt conda-meta record {path}: {exc}; {_FIX}") from exc


def _cut_short(exc: msgspec.DecodeError) -> bool:
    """The bytes end before the JSON does (empty, or a write not finished), as against malformed JSON."""
    return "truncated" in str(exc)


def _age(path: str | os.PathLike[str]) -> float | None:
    try:
        return max(0.0, time.time() - os.stat(path).st_mtime)
    except OSError:
        return None


def record_to_package(record: Record | dict[str, Any]) -> Package:
    """A conda-meta record (or a plain mapping of one, as `iter_records` yields) as a Package."""
    if isinstance(record, dict):
        record = msgspec.convert(record, Record)
    url = record.url or ""
    channel = record.channel or ""
    subdir = record.subdir or ""
    if url:
        url_channel, url_subdir = channel_from_url(url)
        channel = url_channel or normalize(channel)
        subdir = subdir or url_subdir
    else:
        channel = normalize(channel)
    return Package(
        manager="conda",
        name=record.name,
        version=record.version,
        build=record.build or record.build_string or "",
        build_number=record.build_number or 0,
        channel=channel,
        subdir=subdir,
        url=strip_credentials(url),
        md5=record.md5 or "",
        sha256=record.sha256 or "",
        depends=tuple(record.depends or ()),
    )


class Slim(msgspec.Struct, frozen=True, array_like=True):
    """What the prefix reader keeps of a record: its Package and the specs it says were requested."""

    package: Package
    requested: list[str]


def read_slim(path: str) -> Slim:
    """One record's Package and requested specs (the prefix reader's read of a record); its name, version
    and build held to a lock's rules (CEP 26): a record named `evil/numpy` never reaches a purl or a lock."""
    record = read_record(path)
    package = record_to_package(record)
    problem = identity_problem("conda", package.name, package.version, package.build)
    if problem is not None:
        raise BadInputError(f"corrupt conda-meta record {path}: {problem}; {_FIX}")
    return Slim(package, requested(record))


def requested(record: Record) -> list[str]:
    """The specs a record says were requested (`requested_specs`, else the older `requested_spec`)."""
    if record.requested_specs:
        return list(record.requested_specs)
    return [record.requested_spec] if record.requested_spec else []


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


def torn_records(prefix: Path) -> list[Path]:
    """The conda-meta records of `prefix` that are not whole JSON: empty, or cut short (a write stopped by a
    full disk or a kill). Only a caller holding the environment's lock may take them for torn rather than
    being written (envguard.engine.target)."""
    torn = []
    for path in sorted((prefix / "conda-meta").glob("*.json")):
        try:
            msgspec.json.decode(read_bytes(path))
        except msgspec.DecodeError as exc:
            if _cut_short(exc):  # malformed but whole JSON is corrupt, not torn: left for the user
                torn.append(path)
        except OSError:
            continue
    return torn
