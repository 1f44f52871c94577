"""The licenses an environment's own metadata declares: a conda record's `license`, a dist-info's
`License-Expression` (PEP 639) or `License` header. Read for the SBOM only (envguard export --format
cyclonedx); nothing else needs them."""

from __future__ import annotations

from pathlib import Path

from envguard.prefix.pip_dist import dist_info_dirs
from envguard.prefix.records import iter_records
from envguard.specs import canonical_name


def licenses(prefix: Path) -> dict[tuple[str, str], str]:
    """(manager, name) -> the declared license text, for every package of PREFIX that declares one."""
    found: dict[tuple[str, str], str] = {}
    if (prefix / "conda-meta").is_dir():
        for _, record in iter_records(prefix):
            text = str(record.get("license") or "").strip()
            if text:
                found[("conda", str(record["name"]))] = text
    for folder in dist_info_dirs(prefix):
        name, text = _declared(folder / "METADATA")
        if name and text:
            found[("pip", canonical_name(name))] = text
    return found


def _declared(metadata: Path) -> tuple[str, str]:
    """(Name, license) from a METADATA file's headers: `License-Expression` wins over `License`."""
    name = expression = legacy = ""
    try:
        with open(metadata, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    break  # the headers end at the first blank line
                key, _, value = line.partition(":")
                if key == "Name":
                    name = value.strip()
                elif key == "License-Expression":
                    expression = value.strip()
                elif key == "License" and not legacy:
                    legacy = value.strip()
    except OSError:
        return "", ""
    return name, expression or (legacy if legacy.upper() not in ("", "UNKNOWN") else "")
