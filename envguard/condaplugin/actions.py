"""What the conda plugin's hooks do (conda-free: conda's marks and its confirm function are handed in).

Inside conda, envguard never fails a conda command and never shows a traceback: bad input (a lock it cannot
read) is one line in conda's output; anything unexpected is one line naming the log file that holds the
traceback (envguard.cli.boundary.bug), and conda carries on.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from envguard.channels import scrub
from envguard.cli.boundary import bug
from envguard.condaplugin import render
from envguard.condaplugin.health import LockHealth, followed_lock, lock_health, torch_health
from envguard.condaplugin.remedy import restore_command, sync_argv
from envguard.errors import EXIT_DRIFT, EXIT_OK, EnvguardError
from envguard.output import command, human_bytes
from envguard.textio import visible

Confirm = Callable[[str], object]  # conda's: returns when the user agreed, raises otherwise (or in dry-run)
# the largest lock the hook after each conda command reads (a 50,000-package conda-lock.yml is ~12 MB, read
# in ~0.2 s from the parse cache); past it, one line says how to check it (a 48 MB lock took ~21 s a command)
HOOK_MAX_BYTES = 16 * 1024 * 1024


def lock_check(prefix: str, verbose: bool, ok: str, bad: str) -> None:
    """`conda doctor`: the environment against the lock it follows."""
    _print(lambda: render.lock_lines(lock_health(Path(prefix)), ok, bad, verbose=verbose))


def torch_check(prefix: str, ok: str, bad: str) -> None:
    """`conda doctor`: torch, torchvision and torchaudio from one release and one build."""
    _print(lambda: render.torch_lines(torch_health(Path(prefix)), ok, bad))


def after_command(prefix: str) -> None:
    """After `conda install/update/remove`: one line on stderr when the environment left its lock (stderr
    keeps `--json` output parseable). A lock past HOOK_MAX_BYTES is not read: one line says how to check
    it."""
    try:
        big = _too_big(Path(prefix))
        line = big if big is not None else render.left_its_lock(lock_health(Path(prefix)))
    except Exception:  # never a failed conda command because of envguard: one line and a log
        bug()
        return
    if line is not None:
        sys.stderr.write(_line(line) + "\n")


def _too_big(prefix: Path) -> str | None:
    """The line for a followed lock too big to read after every conda command, None for any other (a lock
    or configuration that cannot be read is lock_health's to say)."""
    try:
        followed = followed_lock(prefix)
        size = followed.lock.stat().st_size if followed is not None else 0
    except (EnvguardError, OSError):
        return None
    if followed is None or size <= HOOK_MAX_BYTES:
        return None
    check_line = command("envguard", "check", str(prefix), "--lock", str(followed.lock))
    return (
        f"envguard: not checked against its lock after this command: {visible(str(followed.lock))} is "
        f"{human_bytes(size)}, more than the {human_bytes(HOOK_MAX_BYTES)} read after each conda command; "
        f"run '{check_line}'"
    )


def fix_lock(prefix: str, confirm: Confirm) -> int:
    """`conda doctor --fix`: restore the environment to its lock with `envguard sync` (asked first), or say
    what to run where envguard has no sync."""
    try:
        health = lock_health(Path(prefix))
    except Exception:
        return bug()
    return _restore(health, confirm)


def fix_torch(prefix: str, confirm: Confirm) -> int:
    """`conda doctor --fix` for the torch family: a family the lock keeps together is restored from the lock;
    one the lock itself pins is said so."""
    try:
        family, health = torch_health(Path(prefix)), lock_health(Path(prefix))
    except Exception:
        return bug()
    if not family.problems:
        what = "torch's family belongs together" if family.members else "no torch"
        _say(f"envguard: {prefix}: {what}; nothing to fix")
        return EXIT_OK
    if health.state == "clean":
        _say(
            f"envguard: {prefix} is as its lock says: the lock itself holds these builds; fix the "
            "environment.yml (one torch release, one index) and lock it again"
        )
        return EXIT_DRIFT
    if health.state == "no-lock":
        _say(
            f"envguard: no lock to restore {prefix} from; install the torchvision/torchaudio of torch's "
            "release from the index torch came from"
        )
        return EXIT_DRIFT
    return _restore(health, confirm)


def _restore(health: LockHealth, confirm: Confirm) -> int:
    if health.state in ("clean", "no-lock"):
        _say(
            f"envguard: {health.prefix}: {'matches its lock' if health.state == 'clean' else 'no lock'}; "
            "nothing to fix"
        )
        return EXIT_OK
    if health.state == "unreadable":
        _say(f"envguard: cannot check {health.prefix} against its lock: {health.problem}")
        return EXIT_DRIFT
    argv = sync_argv(health)
    if argv is None:
        _say(*render.what_to_run(health))
        return EXIT_DRIFT
    confirm(_line(f"Restore {health.prefix} to its lock with `{restore_command(health)}`?"))
    return subprocess.run(argv, check=False).returncode


def _print(lines: Callable[[], list[str]]) -> None:
    try:
        said = lines()
    except Exception:  # as after_command: conda's report goes on
        bug()
        return
    _say(*said)


def _say(*lines: str) -> None:
    """Lines in conda's output, as envguard prints them: each one line (a line break, or any control or
    bidi character, read from a file inside a value is escaped), no credential."""
    print("\n".join(_line(line) for line in lines))


def _line(text: str) -> str:
    return visible(scrub(text), lines=False)
