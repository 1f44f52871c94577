"""One lock per environment, and the journal that makes replacing one safe against SIGKILL.

Every command that changes an environment (create, sync) holds its target's lock from before its first
decision to its last write; a second one waits (`ENVGUARD_LOCK_WAIT` s, default 60), then exits 2 naming the
holder. Beside the target T = FOLDER/NAME, all in FOLDER (one rename away, never another file system):

- `.NAME.envguard-lock`: flock'd while a command works on T; holds its PID and command line for messages.
  The kernel drops a flock when its process dies, even by SIGKILL, so holding the lock proves that whoever
  wrote the journal is gone.
- `.NAME.envguard-journal`: written (atomically, durably) before T is touched, removed once the change is
  complete or undone: the owner's PID, whether T is new, and whether the old environment waits aside.
- `.NAME.envguard-old-PID`: the old environment, renamed aside (one atomic rename, byte-identical) while its
  replacement is built at the real path (conda packages bake their prefix into files, so a prefix cannot be
  built elsewhere and moved).

Whoever takes the lock next and finds a journal finishes what its dead owner left: the old environment comes
back (the half-built replacement is deleted), or a half-made new one is removed; nothing else is deleted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from envguard.atomic import clean_stale_temps, write_text
from envguard.errors import BadInputError, OperationalError
from envguard.output import inform, oneline
from envguard.prefix.condaconfig import register, registered_environments, unregister
from envguard.process import alive, sigterm_as_interrupt

LOCK_SUFFIX = ".envguard-lock"
JOURNAL_SUFFIX = ".envguard-journal"
ASIDE = ".envguard-old-"
DEFAULT_WAIT_S = 60.0
POLL_S = 0.2
JOURNAL_VERSION = 1
Phase = Literal["building", "done"]
_HELD: dict[Path, Held] = {}  # the targets this process holds now


class TargetBusy(BadInputError):
    """Another process holds the target's lock (exit 2, naming it)."""


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a target's lock, as it wrote itself into the lock file."""

    pid: int | None
    command: str
    since: float | None

    def describe(self) -> str:
        who = f"process {self.pid}" if self.pid else "another process"
        what = f" ({self.command})" if self.command else ""
        when = f", since {time.strftime('%H:%M:%S', time.localtime(self.since))}" if self.since else ""
        return f"{who}{what}{when}"


@dataclass(frozen=True, slots=True)
class Journal:
    """What a command changing a target promised to undo if it does not finish."""

    pid: int
    command: str
    made: bool  # the target did not exist (or was an empty folder): everything there is this command's
    aside: bool  # the old environment waits at `.NAME.envguard-old-PID`
    registered: bool  # the target was in ~/.conda/environments.txt before
    phase: Phase = "building"
    version: int = JOURNAL_VERSION


@dataclass
class Held:
    """A target whose lock this process holds; `recovered` says what a dead command's leftovers became."""

    target: Path
    recovered: list[str] = field(default_factory=list)


def lock_path(target: Path) -> Path:
    return target.with_name(f".{target.name}{LOCK_SUFFIX}")


def journal_path(target: Path) -> Path:
    return target.with_name(f".{target.name}{JOURNAL_SUFFIX}")


def aside_path(target: Path, pid: int | None = None) -> Path:
    return target.with_name(f".{target.name}{ASIDE}{os.getpid() if pid is None else pid}")


def wait_seconds() -> float:
    """How long a second command waits for a target's lock: `ENVGUARD_LOCK_WAIT` (default 60)."""
    try:
        return max(0.0, float(os.environ.get("ENVGUARD_LOCK_WAIT", DEFAULT_WAIT_S)))
    except ValueError:
        return DEFAULT_WAIT_S


@contextlib.contextmanager
def hold(target: Path, *, wait: float | None = None) -> Iterator[Held]:
    """Hold `target`'s lock for the block, after finishing what a killed command left there (see `recover`).
    Waits up to `wait` seconds (default `wait_seconds()`) for another holder, then raises TargetBusy. In a
    block holding the same target, it is that hold (a second flock by this process would wait for itself)."""
    target = target.expanduser().absolute()  # the lock file is the same file however its folder is spelt
    if target in _HELD:
        yield _HELD[target]
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OperationalError(
            f"cannot create {target.parent} ({exc.strerror}); check the path and its permissions"
        ) from exc
    fd = _acquire(target, wait_seconds() if wait is None else wait)
    try:
        held = _HELD[target] = Held(target)
        done = recover(target)
        if done:
            held.recovered.append(done)
        yield held
    finally:
        _HELD.pop(target, None)
        with contextlib.suppress(OSError):
            os.unlink(lock_path(target))  # before the flock goes: a waiter then finds the file replaced
        os.close(fd)


def _acquire(target: Path, wait: float) -> int:
    """An open, flock'd lock file that is still the one at its path (not one a previous holder unlinked)."""
    path = lock_path(target)
    deadline = time.monotonic() + wait
    told = False
    while True:
        fd = _open_lock(path)
        if _try_flock(fd) and _still_there(fd, path):
            _write_holder(fd)
            return fd
        holder = read_holder(path)
        os.close(fd)
        if time.monotonic() >= deadline:
            raise TargetBusy(
                f"{target} is being changed by {holder.describe()}; wait for it to finish and run this "
                f"again, or raise ENVGUARD_LOCK_WAIT (now {wait:g} s); nothing was changed"
            )
        if not told:
            inform(f"waiting for {holder.describe()}, which is changing {target}")
            told = True
        time.sleep(POLL_S)


def _open_lock(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise OperationalError(
            f"cannot lock {path.parent / path.name.removesuffix(LOCK_SUFFIX).lstrip('.')} ({exc.strerror} "
            f"on {path}); check that {path.parent} is writable"
        ) from exc


def _try_flock(fd: int) -> bool:
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except (ImportError, OSError):  # Windows, or a file system without flock: the journal's PID still guards
        pass
    return True


def _still_there(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


def _write_holder(fd: int) -> None:
    data = f"{os.getpid()}\n{time.time():.0f}\n{_command()}\n".encode()
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)


def read_holder(path: Path) -> Holder:
    """The PID, start time and command the holder wrote into the lock file (blank while it starts)."""
    try:
        with open(path, "rb") as handle:
            lines = handle.read(4096).decode("utf-8", "replace").splitlines()
    except OSError:
        lines = []
    pid = int(lines[0]) if lines and lines[0].isdigit() else None
    since = float(lines[1]) if len(lines) > 1 and lines[1].isdigit() else None
    return Holder(pid, lines[2] if len(lines) > 2 else "", since)


def read_journal(target: Path) -> Journal | None:
    """The journal beside `target`, or None (none, or one this envguard cannot read: left alone)."""
    try:
        data = json.loads(journal_path(target).read_bytes())
        journal = Journal(**data)
    except (OSError, ValueError, TypeError):
        return None
    if journal.version != JOURNAL_VERSION or not isinstance(journal.pid, int):
        return None
    return journal


def _write_journal(target: Path, journal: Journal) -> None:
    write_text(journal_path(target), json.dumps(asdict(journal), indent=1) + "\n")


def _clear_journal(target: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(journal_path(target))


def recover(target: Path) -> str | None:
    """Under the lock: finish what a command killed while changing `target` left, and say what was done.
    Its old environment comes back (the half-built replacement is deleted first); a half-made new one is
    removed and unregistered; a finished replacement's leftover old copy is deleted. A journal write a kill
    cut short (its temp file, never renamed over the journal) is deleted too."""
    clean_stale_temps(journal_path(target))
    journal = read_journal(target)
    if journal is None:
        return _recover_legacy(target)
    if journal.pid == os.getpid() or (_no_flock() and alive(journal.pid)):
        return None
    aside = aside_path(target, journal.pid)
    who = f"a killed envguard (process {journal.pid}: {journal.command or 'unknown command'})"
    if journal.phase == "done":
        _remove_tree(aside)
        _clear_journal(target)
        return None
    if journal.aside and os.path.lexists(aside):
        if os.path.lexists(target) and not _remove_tree(target):
            raise OperationalError(
                f"{who} left {target} half-built and it cannot be deleted; the original waits in {aside}: "
                f"delete {target} and rename {aside} back to it"
            )
        os.rename(aside, target)
        if journal.registered:
            with contextlib.suppress(OperationalError):  # a read-only registry: it stays as it is
                register(target)
        _clear_journal(target)
        return f"restored {target}, which {who} had set aside to replace it"
    if journal.made and os.path.lexists(target):
        if not _remove_tree(target):
            raise OperationalError(
                f"{who} left {target} half-made and it cannot be deleted; delete it by hand"
            )
        if not journal.registered:
            with contextlib.suppress(OperationalError):
                unregister(target)
        _clear_journal(target)
        return f"removed {target}, which {who} had left half-made"
    _clear_journal(target)
    return None


def interrupted(target: Path) -> str | None:
    """For check, which reads `target` and changes nothing: one line when a killed envguard left it mid-change
    (what it reads is not the environment), else None (a live owner's lock speaks for itself)."""
    journal = read_journal(target)
    if journal is None or journal.phase == "done" or journal.pid == os.getpid() or alive(journal.pid):
        return None
    who = f"a killed envguard (process {journal.pid}: {oneline(journal.command) or 'unknown command'})"
    aside, then = aside_path(target, journal.pid), "the next `envguard create` or `envguard sync` of it"
    if journal.aside and os.path.lexists(aside):
        kept = f"the original waits in {aside}"
        return f"{target} is half-built: {who} was replacing it ({kept}); {then} puts the original back first"
    return f"{target} is half-made: {who} was creating it; {then} removes it first" if journal.made else None


def _recover_legacy(target: Path) -> str | None:
    """An old environment an envguard without journals left aside: back when its owner is dead and the
    target is missing or has no conda-meta (that envguard deleted the aside only after success)."""
    prefix = f".{target.name}{ASIDE}"
    try:
        names = sorted(n for n in os.listdir(target.parent) if n.startswith(prefix))
    except OSError:
        return None
    for name in names:
        pid = name[len(prefix) :]
        if not pid.isdigit() or alive(int(pid)) or (target / "conda-meta").is_dir():
            continue
        _remove_tree(target)
        os.rename(target.parent / name, target)
        return f"restored {target}, which a killed envguard (process {pid}) had set aside"
    return None


def _no_flock() -> bool:
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return True
    return False


def _remove_tree(path: Path) -> bool:
    """Delete a folder tree (never following a symlink); True when nothing is left at `path`."""
    if not os.path.lexists(path):
        return True
    for _attempt in range(3):  # a process that wrote on after its error may add files while we delete
        if os.path.islink(path) or not os.path.isdir(path):
            with contextlib.suppress(OSError):
                os.unlink(path)
        else:
            shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            return True
        time.sleep(0.1)
    return False


# --- a change under the journal ----------------------------------------------------------------------------


@contextlib.contextmanager
def changing(held: Held, *, replace: bool) -> Iterator[None]:
    """Build `held.target` inside the block. With `replace`, the existing environment is renamed aside first
    and deleted only when the block succeeds; on any failure, Ctrl-C or SIGTERM the half-made target is
    deleted and the old one renamed back (a new target is unregistered again). A SIGKILL at any point leaves
    the journal, and the next `hold` of the target does the same."""
    target = held.target
    registered = target in registered_environments()
    empty = os.path.isdir(target) and not os.path.islink(target) and not any(os.scandir(target))
    made = not os.path.lexists(target) or empty
    journal = Journal(os.getpid(), _command(), made=made, aside=replace, registered=registered)
    _write_journal(target, journal)
    aside = aside_path(target)
    if replace:
        try:
            os.rename(target, aside)
        except OSError as exc:
            _clear_journal(target)
            raise OperationalError(
                f"cannot move {target} aside to replace it ({exc.strerror}); nothing was changed"
            ) from exc
    with sigterm_as_interrupt():
        try:
            yield
        except BaseException as exc:
            _undo(target, journal, empty, exc)
            raise
        if replace:
            _write_journal(target, Journal(**{**asdict(journal), "phase": "done"}))
            _remove_tree(aside)
        _clear_journal(target)


def _undo(target: Path, journal: Journal, empty: bool, error: BaseException) -> None:
    """Put back what was there before the block; keep the journal (for the next command) if that fails."""
    if not _remove_tree(target):
        _note(
            error, f"{target} could not be deleted completely; the next envguard command on it finishes that"
        )
        return
    if journal.aside:
        try:
            os.rename(aside_path(target), target)
        except OSError as exc:
            _note(
                error,
                f"{aside_path(target)} could not be renamed back ({exc.strerror}); the next envguard "
                "command on it does that",
            )
            return
    else:
        if empty:
            target.mkdir()
        if not journal.registered:
            with contextlib.suppress(OperationalError):
                unregister(target)
    _clear_journal(target)


def _note(error: BaseException, text: str) -> None:
    if isinstance(error, OperationalError | BadInputError) and error.args:
        error.args = (f"{error.args[0]}; {text}", *error.args[1:])


def _command() -> str:
    words = [os.path.basename(sys.argv[0]) if sys.argv else "python", *sys.argv[1:]]
    return " ".join(" ".join(words).split())[:200]
