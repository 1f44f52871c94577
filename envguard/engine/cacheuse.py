"""A package cache in use: the shared flock an install holds on `PKGS/.envguard-install.lock` from fetching
archives into the cache to linking them (rattler's own cache lock covers only the link), which `envguard
clean` takes exclusively. Standard library only: clean reads the name without loading the install path."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

CACHE_USER_LOCK = ".envguard-install.lock"


@contextlib.contextmanager
def using_cache(pkgs_dir: Path) -> Iterator[None]:
    """Hold a shared flock on `pkgs_dir/.envguard-install.lock` while archives are fetched into the cache and
    linked from it: `envguard clean` takes it exclusively, so it never moves what an install is about to
    link (rattler's own cache lock covers only the link itself). Best effort: a cache that cannot hold the
    file is used unlocked, as before."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        pkgs_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(pkgs_dir / CACHE_USER_LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_SH)  # waits while a clean moves things (a rename each: moments)
        yield
    finally:
        os.close(fd)
