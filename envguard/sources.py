"""Turn a SOURCE argument into an Environment: a prefix, `name:ENV`, or a file of any supported kind.

File kinds are detected by content, not by name, so `env.lock` or `spec.txt` work whatever they are called.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from envguard.errors import BadInputError
from envguard.formats import read_file
from envguard.model import Environment, VirtualPackage


def default_prefix() -> Path:
    """The active environment: CONDA_PREFIX, else the running interpreter's prefix."""
    active = os.environ.get("CONDA_PREFIX")
    return Path(active) if active else Path(sys.prefix)


def resolve_prefix(source: str | None) -> Path:
    """A prefix path for SOURCE when it names an environment (None, `name:ENV`, or a folder)."""
    if source is None:
        return default_prefix()
    if source.startswith("name:"):
        from envguard.prefix.condaconfig import find_named

        return find_named(source[len("name:") :])
    return Path(source).expanduser()


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

    from envguard.prefix.reader import read_prefix

    virtual: tuple[VirtualPackage, ...] = ()
    if detect_virtual:
        from envguard.machine import virtual as virtual_mod

        virtual = virtual_mod.detect()
    env = read_prefix(prefix, virtual)
    if probe:
        from envguard.prefix.probe import run_probe

        env = dataclasses.replace(env, fingerprints=run_probe(prefix))
    return env
