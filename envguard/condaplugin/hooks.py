"""envguard's conda plugin: the module conda loads through the `conda` entry point group (pyproject.toml).

It registers two `conda doctor` health checks (`envguard-lock`: the environment against its lock;
`envguard-torch-family`: torch, torchvision and torchaudio from one release and one build), each with a
`--fix`; a post-command hook after `conda install`, `update` and `remove` that says in one line when the
environment left its lock; and the condarc setting that turns that line off:

    plugins:
      envguard_lock_warning: false

conda imports this module whenever it loads its plugins (every command but `--version` and shell
activation), so it imports only what conda has already loaded; envguard's own work
(envguard.condaplugin.actions) is imported when a check, a fix or the hook runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, TypeVar

from conda.base.constants import OK_MARK, X_MARK
from conda.common.configuration import PrimitiveParameter
from conda.plugins import hookimpl
from conda.plugins.types import CondaHealthCheck, CondaPostCommand, CondaSetting

SETTING = "envguard_lock_warning"
AFTER = frozenset({"install", "update", "remove"})
EXIT_OPERATIONAL = 3  # envguard.errors' (not imported: conda loads this module at start-up, keep it bare)
_F = TypeVar("_F", bound=Callable[..., Any])


def _hookimpl(function: _F) -> _F:
    """conda's pluggy marker (conda ships no type information), typed for mypy."""
    marked: _F = hookimpl(function)
    return marked


def _actions() -> ModuleType | None:
    """envguard's check and everything it reads with: only when a hook runs, never at conda's start-up. None
    (and one line) where envguard's own dependencies cannot be imported by conda's Python (envguard found on
    the path without them): never a failed conda command because of envguard."""
    try:
        from envguard.condaplugin import actions
    except ImportError as exc:
        sys.stderr.write(
            f"envguard: its conda plugin cannot load envguard in this Python ({exc}); install envguard into "
            "conda's base environment with its dependencies (python -m pip install /path/to/envguard)\n"
        )
        return None
    return actions


def _lock_check(prefix: str, verbose: bool) -> None:
    if (actions := _actions()) is not None:
        actions.lock_check(prefix, verbose, OK_MARK, X_MARK)


def _torch_check(prefix: str, verbose: bool) -> None:
    if (actions := _actions()) is not None:
        actions.torch_check(prefix, OK_MARK, X_MARK)


def _lock_fix(prefix: str, args: Any, confirm: Any) -> int:
    actions = _actions()
    code: int = actions.fix_lock(prefix, confirm) if actions is not None else EXIT_OPERATIONAL
    return code


def _torch_fix(prefix: str, args: Any, confirm: Any) -> int:
    actions = _actions()
    code: int = actions.fix_torch(prefix, confirm) if actions is not None else EXIT_OPERATIONAL
    return code


def _after(command: str) -> None:
    from conda.base.context import context  # loaded by conda before any command runs

    if command not in AFTER or not getattr(context.plugins, SETTING, True):
        return
    prefix = str(context.target_prefix)
    if _lock_in_play(prefix) and (actions := _actions()) is not None:
        actions.after_command(prefix)


def _lock_in_play(prefix: str) -> bool:
    """Whether `prefix` may follow a lock (condaplugin.health.followed_lock): one recorded in it, or a
    conda-lock.yml, or a pyproject.toml that names envguard, from the working folder up. A superset of what
    followed_lock finds, read with os.path alone, so a conda command where no lock is in play imports none of
    envguard's checks (~0.15 s of CPU after every `conda install` on a small environment)."""
    if os.path.isfile(os.path.join(prefix, "etc", "envguard", "lock.json")):
        return True
    folder = os.getcwd()
    while True:
        if os.path.isfile(os.path.join(folder, "conda-lock.yml")):
            return True
        project = os.path.join(folder, "pyproject.toml")
        try:
            with open(project, "rb") as handle:
                if b"envguard" in handle.read():
                    return True
        except OSError:
            pass
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


@_hookimpl
def conda_health_checks() -> Iterable[CondaHealthCheck]:
    yield CondaHealthCheck(
        name="envguard-lock",
        action=_lock_check,
        fixer=_lock_fix,
        summary="The environment matches the lock it follows (envguard: conda, pip, CUDA/torch build)",
        fix="Restore the environment to its lock (envguard sync)",
    )
    yield CondaHealthCheck(
        name="envguard-torch-family",
        action=_torch_check,
        fixer=_torch_fix,
        summary="torch, torchvision and torchaudio are one release and one build (envguard)",
        fix="Restore the environment to its lock (envguard sync)",
    )


@_hookimpl
def conda_post_commands() -> Iterable[CondaPostCommand]:
    yield CondaPostCommand(name="envguard-lock-warning", action=_after, run_for=set(AFTER))


@_hookimpl
def conda_settings() -> Iterable[CondaSetting]:
    yield CondaSetting(
        name=SETTING,
        description="envguard: say in one line when `conda install/update/remove` took the environment "
        "away from its lock (true by default)",
        parameter=PrimitiveParameter(True, element_type=bool),
    )
