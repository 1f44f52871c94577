"""envguard's own cache folder (standard library only: the check fast path uses it)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """envguard's cache folder (`$ENVGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/envguard`, else
    ~/.cache/envguard)."""
    explicit = os.environ.get("ENVGUARD_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "envguard"
