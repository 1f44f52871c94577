"""envguard's own cache folder (standard library only: the check fast path uses it)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's own constant would cost an import on the fast path
if TYPE_CHECKING:
    from pathlib import Path

# What the detected virtual packages depend on besides the machine: the variables conda honours as overrides.
# Both the virtual-package cache and the check fast path key on them.
OVERRIDE_VARS = (
    "CONDA_OVERRIDE_CUDA",
    "CONDA_OVERRIDE_GLIBC",
    "CONDA_OVERRIDE_OSX",
    "CONDA_OVERRIDE_ARCHSPEC",
    "CONDA_OVERRIDE_LINUX",
    "CONDA_OVERRIDE_WIN",
)


def cache_path() -> str:
    """envguard's cache folder as text: `$ENVGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/envguard`, else
    ~/.cache/envguard (os only: the check fast path calls it)."""
    explicit = os.environ.get("ENVGUARD_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "envguard")


def cache_dir() -> Path:
    """envguard's cache folder (see cache_path)."""
    from pathlib import Path

    return Path(cache_path())
