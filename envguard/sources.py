"""Turn a SOURCE argument into an Environment: a prefix, `name:ENV`, or a file of any supported kind.

File kinds are detected by content, not by name, so `env.lock` or `spec.txt` work whatever they are called.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from envguard.errors import BadInputError
from envguard.model import Environment, SourceKind, VirtualPackage

FILE_KINDS: tuple[SourceKind, ...] = ("snapshot", "conda-lock", "pixi-lock", "explicit", "environment.yml")
_VERSION_LINE = re.compile(r"^version:\s*['\"]?(\d+)", re.MULTILINE)


def default_prefix() -> Path:
    """The active environment: CONDA_PREFIX, else the running interpreter's prefix."""
    active = os.environ.get("CONDA_PREFIX")
    return Path(active) if active else Path(sys.prefix)


def resolve_prefix(source: str | None) -> Path:
    """A prefix path for SOURCE when it names an environment (None, `name:ENV`, or a folder)."""
    if source is None:
        return default_prefix()
    if source.startswith("name:"):
        from envguard.condaconfig import find_named

        return find_named(source[len("name:") :])
    return Path(source).expanduser()


def detect_kind(path: Path) -> SourceKind:
    """Sniff a file's kind from its first few KB."""
    from envguard.textio import decode

    try:
        with open(path, "rb") as handle:
            head = decode(handle.read(65536), path)
    except FileNotFoundError as exc:
        raise BadInputError(f"{path}: no such file or environment; check the path") from exc
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror})") from exc
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


def load(
    source: str | None, *, platform: str | None = None, probe: bool = False, detect_virtual: bool = True
) -> Environment:
    """Read SOURCE into an Environment; live environments get virtual packages and optionally fingerprints."""
    if source is not None and not source.startswith("name:"):
        path = Path(source).expanduser()
        if path.is_file():
            return read_file(path, platform=platform)
        if not path.exists():
            raise BadInputError(
                f"{source}: no such file or environment; give a prefix folder, name:ENV or a file"
            )
    prefix = resolve_prefix(source)
    return read_live(prefix, probe=probe, detect_virtual=detect_virtual)


def read_live(prefix: Path, *, probe: bool = False, detect_virtual: bool = True) -> Environment:
    """Snapshot a live prefix; with `probe`, run the fingerprint probe in its own interpreter."""
    import dataclasses

    from envguard.readers.prefix import read_prefix

    virtual: tuple[VirtualPackage, ...] = ()
    if detect_virtual:
        from envguard import virtual as virtual_mod

        virtual = virtual_mod.detect()
    env = read_prefix(prefix, virtual)
    if probe:
        from envguard.probe import run_probe

        env = dataclasses.replace(env, fingerprints=run_probe(prefix))
    return env


def read_file(path: Path, *, platform: str | None = None, kind: SourceKind | None = None) -> Environment:
    """Read a file of any supported kind (detected by content unless `kind` is given)."""
    kind = kind or detect_kind(path)
    if kind == "snapshot":
        from envguard.readers import snapshot

        return snapshot.read(path)
    if kind == "explicit":
        from envguard.readers import explicit

        return explicit.read(path)
    if kind == "conda-lock":
        from envguard.readers import condalock

        return condalock.read(path, platform=platform)
    if kind == "pixi-lock":
        from envguard.readers import pixilock

        return pixilock.read(path, platform=platform)
    from envguard.readers import envyml

    return envyml.read(path)
