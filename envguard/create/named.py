"""`envguard name`'s work: the name `envguard create` would give a source, by the very planning path create
takes (an environment.yml is solved for this machine with the same backend), so the two never disagree."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from envguard.create import naming
from envguard.create.run import plan, read_source
from envguard.engine import backends
from envguard.formats import detect_kind
from envguard.machine.platform import current_platform
from envguard.sources import load


@dataclass(frozen=True)
class Named:
    """The semantic name of SOURCE, and what reading or solving it warned about."""

    source: str | None
    name: str
    warnings: tuple[str, ...] = ()


def name_of(source: str | None, channels: tuple[str, ...], *, solve: bool, backend: str | None) -> Named:
    """The name create would give SOURCE (an environment.yml solved unless `solve` is False; anything else
    read as it is)."""
    path = Path(source) if source else None
    # os.path: a name too long for the file system is no file (load says why)
    if path is not None and os.path.isfile(path) and detect_kind(path) == "environment.yml" and solve:
        platform = current_platform()
        planned = plan(
            read_source(str(path), None, (), channels, platform), backends.select(backend), platform
        )
        return Named(source, planned.name, planned.warnings)
    env = load(source, detect_virtual=False)
    return Named(source, naming.semantic_name(env), env.warnings)
