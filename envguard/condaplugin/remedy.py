"""The commands that bring an environment back to its lock, or make its lock what it now is, as they are
printed (they run as printed) and as the `--fix` of `conda doctor` runs them."""

from __future__ import annotations

import sys

from envguard.cli.commandlist import COMMANDS
from envguard.condaplugin.health import LockHealth
from envguard.errors import EnvguardError
from envguard.formats import detect_kind
from envguard.output import command

_FORMAT_FLAG: dict[str, tuple[str, ...]] = {
    "conda-lock": (),
    "explicit": ("--format", "explicit"),
    "pixi-lock": ("--format", "pixi"),
}


def can_sync() -> bool:
    """Whether this envguard has `envguard sync` (until it does, a fix says what to run instead)."""
    return "sync" in COMMANDS


def sync_argv(health: LockHealth) -> list[str] | None:
    """`envguard sync PREFIX --lock LOCK --yes` run with this interpreter, or None without sync or a lock."""
    if not can_sync() or health.followed is None:
        return None
    lock = str(health.followed.lock)
    return [sys.executable, "-m", "envguard", "sync", str(health.prefix), "--lock", lock, "--yes"]


def restore_command(health: LockHealth) -> str | None:
    """The one command that restores everything: `envguard sync ... --yes` where envguard has it (it runs
    as printed, with or without a terminal, as check's fix lines do), else the first fix `envguard check`
    gives."""
    if health.followed is None:
        return None
    if can_sync():
        return command("envguard", "sync", str(health.prefix), "--lock", str(health.followed.lock), "--yes")
    fixes = health.report.fixes if health.report is not None else ()
    return fixes[0] if fixes else None


def accept_command(health: LockHealth) -> str | None:
    """`envguard lock PREFIX -o LOCK` in the lock's own format: the lock becomes what is installed."""
    if health.followed is None:
        return None
    try:
        kind = detect_kind(health.followed.lock)
    except (OSError, EnvguardError):
        return None
    flag = _FORMAT_FLAG.get(kind)
    if flag is None:
        return None  # an environment.yml or a snapshot is not written by `envguard lock` from a prefix
    return command("envguard", "lock", str(health.prefix), *flag, "-o", str(health.followed.lock))
