"""Replacing an environment without ever losing it (`create --force`): the old prefix is renamed aside (one
atomic rename in the same folder, so it stays byte-identical), the new one is built at the real path, and only
when everything succeeded (every archive verified and linked, pip done, registered, locked) is the old one
deleted. On any failure, Ctrl-C or SIGTERM the half-made prefix is removed, the old one is renamed back, and a
prefix that did not exist before is unregistered again.

The new environment is built at its final path, not in a temp folder renamed afterwards, because conda
packages bake their prefix into text files (shebangs, prefix placeholders) at link time: a renamed prefix
would be broken.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from envguard.atomic import _alive
from envguard.errors import OperationalError
from envguard.prefix.condaconfig import registered_environments, unregister
from envguard.process import sigterm_as_interrupt

ASIDE = ".envguard-old-"


def aside_path(target: Path) -> Path:
    return target.with_name(f".{target.name}{ASIDE}{os.getpid()}")


def recover(target: Path) -> Path | None:
    """Put back the old environment a killed (SIGKILL) `create --force` left beside `target`, when `target`
    itself is missing or was left without conda-meta; returns the folder restored."""
    prefix = f".{target.name}{ASIDE}"
    try:
        names = sorted(n for n in os.listdir(target.parent) if n.startswith(prefix))
    except OSError:
        return None
    for name in names:
        pid = name[len(prefix) :]
        if not pid.isdigit() or _alive(int(pid)) or (target / "conda-meta").is_dir():
            continue
        shutil.rmtree(target, ignore_errors=True)  # the half-made replacement, if any
        os.rename(target.parent / name, target)
        return target
    return None


@contextlib.contextmanager
def replacing(target: Path, replace: bool) -> Iterator[None]:
    """Build `target` inside the block; with `replace`, the existing prefix comes back on any failure."""
    was_registered = target in registered_environments()
    aside = aside_path(target) if replace else None
    if aside is not None:
        try:
            os.rename(target, aside)
        except OSError as exc:
            raise OperationalError(
                f"cannot move {target} aside to replace it ({exc.strerror}); nothing was changed"
            ) from exc
    with sigterm_as_interrupt():
        try:
            yield
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)  # never leave half an environment behind
            if aside is not None:
                os.rename(aside, target)
            elif not was_registered:
                unregister(target)
            raise
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)
