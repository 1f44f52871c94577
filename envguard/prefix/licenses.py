"""What an environment's packages declare about themselves, for the SBOM only (envguard export --format
cyclonedx); nothing else needs it. A conda record's `license`; a pip dist-info's METADATA headers as written
(the core metadata specification): `Name` as spelled, `License-Expression` (PEP 639), `License`, the
`License ::` classifiers, `Requires-Dist`, `Provides-Extra`, `Summary` and its URLs; and, for a conda package
that ships a dist-info, the PyPI name a pip requirement calls it by."""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from envguard.prefix.pip_dist import CONDA_INSTALLERS, dist_info_dirs
from envguard.prefix.records import iter_records
from envguard.specs import canonical_name
from envguard.textio import read_bytes

Key = tuple[str, str, str]  # (manager, name as the model has it, version)
_DIST_INFO = re.compile(r"site-packages/([^/]+)-[^/-]+\.dist-info/METADATA$")


@dataclass(frozen=True, slots=True)
class Declared:
    """What one package declares; empty fields where it declares nothing."""

    name: str = ""  # as its metadata spells it (`boolean.py`), which the purl keeps
    version: str = ""
    expression: str = ""  # License-Expression: when present, the other licence fields are ignored (PEP 639)
    license: str = ""  # the License header, or a conda record's `license`
    classifiers: tuple[str, ...] = ()  # the `License :: ...` trove classifiers
    requires: tuple[str, ...] = ()  # Requires-Dist, markers and all
    extras: tuple[str, ...] = ()  # Provides-Extra
    summary: str = ""
    urls: tuple[tuple[str, str], ...] = ()  # (label, URL): Home-page, Download-URL, each Project-URL
    pypi_names: tuple[str, ...] = ()  # a conda package's dist-info names, canonical


def declared(prefix: Path) -> dict[Key, Declared]:
    """(manager, name, version) -> what that package of PREFIX declares, for every conda record and pip
    dist-info (two records of one name stay apart by version)."""
    found: dict[Key, Declared] = {}
    if (prefix / "conda-meta").is_dir():
        for _, record in iter_records(prefix):
            key = ("conda", str(record["name"]), str(record["version"]))
            found[key] = Declared(license=str(record.get("license") or "").strip(), pypi_names=_pypi(record))
    for folder in dist_info_dirs(prefix):
        if _installer(folder) in CONDA_INSTALLERS:
            continue  # conda's own: its record says what conda installed
        metadata = _metadata(folder / "METADATA")
        if metadata is not None and metadata.name:
            found[("pip", canonical_name(metadata.name), metadata.version)] = metadata
    return found


licenses = declared  # the name cli/commands/export.py imports


def _pypi(record: dict[str, object]) -> tuple[str, ...]:
    files = record.get("files")
    if not isinstance(files, list):
        return ()
    return tuple(
        sorted(
            {canonical_name(m.group(1)) for f in files if isinstance(f, str) and (m := _DIST_INFO.search(f))}
        )
    )


def _installer(folder: Path) -> str:
    try:
        return read_bytes(folder / "INSTALLER").decode("utf-8", "replace").strip().lower()
    except OSError:
        return ""


def _metadata(path: Path) -> Declared | None:
    """A METADATA file's headers (up to the first blank line) as a Declared; None where it cannot be read."""
    try:
        raw = read_bytes(path).decode("utf-8", "replace")
    except OSError:
        return None
    head = raw.split("\n\n", 1)[0]
    message = HeaderParser().parsestr(head)

    def one(key: str) -> str:
        value = message.get(key)
        return str(value).strip() if value is not None else ""

    def every(key: str) -> list[str]:
        return [str(v).strip() for v in message.get_all(key) or ()]

    legacy = one("License")
    urls = [("Home-page", one("Home-page")), ("Download-URL", one("Download-URL"))]
    for entry in every("Project-URL"):
        label, _, url = entry.partition(",")
        urls.append((label.strip(), url.strip()))
    return Declared(
        name=one("Name"),
        version=one("Version"),
        expression=one("License-Expression"),
        license="" if legacy.upper() in ("", "UNKNOWN") else legacy,
        classifiers=tuple(c for c in every("Classifier") if c.startswith("License ::")),
        requires=tuple(every("Requires-Dist")),
        extras=tuple(canonical_name(e) for e in every("Provides-Extra")),
        summary=one("Summary"),
        urls=tuple((label, url) for label, url in urls if url and url.upper() != "UNKNOWN"),
    )
