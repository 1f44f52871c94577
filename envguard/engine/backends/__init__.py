"""Backend selection: `--backend` > `ENVGUARD_BACKEND` > auto (micromamba, mamba, conda on PATH, else
embedded).

Nothing is probed at import time: `select` looks at PATH only when a command asks for a backend.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from envguard.config import BACKENDS
from envguard.engine.backends.cli import CliBackend
from envguard.engine.backends.embedded import EmbeddedBackend
from envguard.errors import BackendError, UsageError

if TYPE_CHECKING:
    from envguard.engine.backends.base import Backend

CHOICES = BACKENDS
CLI_TOOLS = ("micromamba", "mamba", "conda")


def select(
    choice: str | None = None, *, pkgs_dir: Path | None = None, progress: bool | None = None
) -> Backend:
    """The backend to use: the explicit choice, else `$ENVGUARD_BACKEND`, else the first tool on PATH, else
    the embedded engine. A named tool that is not installed is a one-line BackendError (exit 3). `progress`:
    the embedded engine's spinner and bars on stderr (None: when stderr is a terminal)."""
    wanted = (choice or os.environ.get("ENVGUARD_BACKEND") or "auto").strip().lower()
    if wanted not in CHOICES:
        raise UsageError(f"unknown backend {wanted!r}; choose one of {', '.join(CHOICES)}")
    if wanted == "embedded":
        return embedded_backend(pkgs_dir, progress)
    if wanted == "auto":
        for tool in CLI_TOOLS:
            exe = shutil.which(tool)
            if exe:
                return _cli(tool, exe)
        return embedded_backend(pkgs_dir, progress)
    exe = shutil.which(wanted)
    if exe is None:
        raise BackendError(
            f"{wanted}: not found on PATH; install it, or use --backend embedded (no conda needed)"
        )
    return _cli(wanted, exe)


def embedded_backend(pkgs_dir: Path | None = None, progress: bool | None = None) -> Backend:
    return EmbeddedBackend(pkgs_dir, progress=progress)


def _cli(tool: str, exe: str) -> Backend:
    return CliBackend(tool, exe)
