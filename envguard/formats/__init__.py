"""File formats envguard reads (and writes): one module each, and a registry that recognises a file by
content and names the module that reads each kind.

File kinds are detected by content, not by name, so `env.lock` or `spec.txt` work whatever they are called.
Only the reader of the kind at hand is loaded: a check against a conda-lock.yml does not pay for the pixi.lock
and explicit readers.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from envguard.errors import BadInputError
from envguard.model import Environment, SourceKind
from envguard.textio import decode, read_input

FILE_KINDS: tuple[SourceKind, ...] = ("snapshot", "conda-lock", "pixi-lock", "explicit", "environment.yml")
# kind -> the module whose read(path[, platform=]) reads it; the ones marked True take the platform
READERS: dict[str, tuple[str, bool]] = {
    "snapshot": ("envguard.formats.snapshot", False),
    "explicit": ("envguard.formats.explicit", False),
    "conda-lock": ("envguard.formats.condalock.read", True),
    "pixi-lock": ("envguard.formats.pixilock", True),
    "environment.yml": ("envguard.formats.envyml", False),
}
_VERSION_LINE = re.compile(r"^version:\s*['\"]?(\d+)", re.MULTILINE)


def detect_kind(path: Path) -> SourceKind:
    """Sniff a file's kind from its first few KB."""
    # a character cut at the window's end is dropped, not refused (the whole file is decoded when read)
    head = decode(read_input(path, 65536), path, partial=True)
    stripped = head.lstrip()
    if stripped.startswith("{") and '"schema_version"' in head:
        return "snapshot"
    if re.search(r"^@EXPLICIT\s*$", head, re.MULTILINE):
        return "explicit"
    version = _VERSION_LINE.search(head)
    if version and re.search(r"^environments:\s*$", head, re.MULTILINE):
        return "pixi-lock"
    if version and re.search(r"^(package|metadata):", head, re.MULTILINE):
        return "conda-lock"
    if re.search(r"^metadata:\s*$", head, re.MULTILINE) and re.search(
        r"^\s+content_hash:", head, re.MULTILINE
    ):
        return "conda-lock"  # a lock that lost its `version:` line: let the reader say so precisely
    if re.search(r"^(dependencies|channels|name)\s*:", head, re.MULTILINE) or re.search(r"\{%|\{\{", head):
        return "environment.yml"
    raise BadInputError(
        f"{path}: unknown file kind; expected a conda prefix, environment.yml, explicit spec (@EXPLICIT), "
        "conda-lock.yml, pixi.lock or an envguard snapshot"
    )


def read_file(path: Path, *, platform: str | None = None, kind: SourceKind | None = None) -> Environment:
    """Read a file of any supported kind (detected by content unless `kind` is given)."""
    kind = kind or detect_kind(path)
    module, per_platform = READERS[kind]
    reader = importlib.import_module(module)
    env: Environment = reader.read(path, platform=platform) if per_platform else reader.read(path)
    return env
