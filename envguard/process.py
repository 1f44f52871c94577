"""The one way envguard runs another program: no shell, no stdin, a timeout, and the whole process group
killed when the timeout passes or the caller is interrupted (a tool's own children - DataLoader workers, pip's
builds, conda's solver - never outlive it); and SIGTERM handled like Ctrl-C inside a block, so cleanup
(`finally`, rollback) runs when a CI timeout or `kill` ends envguard instead of leaving temp folders or half
an environment behind."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from envguard.channels import scrub

if TYPE_CHECKING:
    import subprocess

BACKEND_TIMEOUT = 1800.0


def timeout_seconds() -> float:
    """`ENVGUARD_BACKEND_TIMEOUT` seconds (default 1800) for one call of conda, mamba, micromamba or pip."""
    try:
        return float(os.environ.get("ENVGUARD_BACKEND_TIMEOUT", BACKEND_TIMEOUT))
    except ValueError:
        return BACKEND_TIMEOUT


def alive(pid: int) -> bool:
    """Whether process `pid` exists (this process counts; someone else's live process too)."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OverflowError:
        return False  # no such pid can exist
    except PermissionError:
        return True  # someone else's live process
    return True


def one_line(text: str, limit: int = 300) -> str:
    """A program's output collapsed to one line for an error message, credentials removed from every URL."""
    joined = scrub(" ".join(part.strip() for part in text.splitlines() if part.strip()))
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."


class TimedOut(Exception):
    """The program ran past its timeout; its process group was killed. `stdout` holds what it printed so
    far."""

    def __init__(self, seconds: float, stdout: str = "", stderr: str = "") -> None:
        super().__init__(f"did not finish within {seconds:g} s")
        self.seconds, self.stdout, self.stderr = seconds, stdout, stderr


@dataclass(frozen=True, slots=True)
class Finished:
    """A program that ran to its end (any exit code)."""

    returncode: int
    stdout: str
    stderr: str


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr_to_terminal: bool = False,
) -> Finished:
    """Run `argv` and collect its output as text. Raises TimedOut, or OSError when it cannot start."""
    import subprocess  # ~4 ms with selectors and threading: loaded where a program is started

    process = subprocess.Popen(
        [os.fspath(a) for a in argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=None if stderr_to_terminal else subprocess.PIPE,
        text=True,
        env=dict(env) if env is not None else None,
        cwd=Path(cwd) if cwd is not None else None,
        start_new_session=True,  # its own process group, so the whole tree can be stopped at once
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        stdout, stderr = process.communicate()
        raise TimedOut(timeout, stdout or "", stderr or "") from None
    except BaseException:  # Ctrl-C or an error in the caller: never leave the tool running
        kill_group(process)
        process.wait()
        raise
    return Finished(process.returncode, stdout or "", stderr or "")


def kill_group(process: subprocess.Popen[str]) -> None:
    """SIGKILL the process group the program leads (it was started in a session of its own)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if process.poll() is None:
            process.kill()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Inside the block SIGTERM raises KeyboardInterrupt (exit 130 at the boundary, cleanup included)."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_HELD = (signal.SIGINT, signal.SIGTERM)


@dataclass
class HeldSignals:
    previous: dict[int, Any]
    pending: list[int]


def hold_signals() -> HeldSignals | None:
    """Defer SIGINT and SIGTERM for a step that must not be cut in two (their Python handlers record them; a
    handler runs in the main thread whichever thread the kernel delivers to). None outside the main thread."""
    pending: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    try:
        return HeldSignals({s: signal.signal(s, note) for s in _HELD}, pending)
    except ValueError:  # not the main thread: signals are not ours to defer
        return None


def restore_signals(held: HeldSignals | None) -> None:
    """Undo `hold_signals`; a signal that came meanwhile is handled now, here (its handler called: Ctrl-C's
    KeyboardInterrupt is raised by this call), never at some later instruction."""
    if held is None:
        return
    for signum, handler in held.previous.items():
        signal.signal(signum, handler)
    if held.pending:
        signum = held.pending[0]
        handler = held.previous[signum]
        if callable(handler):
            handler(signum, None)
        elif handler == signal.SIG_DFL:
            signal.raise_signal(signum)
