"""The watched job as a process: start COMMAND in its own process group with the hook on its PYTHONPATH, make
that group the terminal's foreground group, forward its output as it comes, forward Ctrl-C and SIGTERM to its
group where the terminal does not, stop it when --duration is up."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from envguard.errors import BadInputError

HOOK_DIR = Path(__file__).parent / "hook"
DIR_ENV = "ENVGUARD_WATCH_DIR"  # where the hook writes its streams (hook/sitecustomize.py reads it)
TRACE_ENV = "ENVGUARD_WATCH_TRACE"  # 1: the hook records per-batch spans too (hook/_envguard_spans.py)
STOP_GRACE_S = 5.0
KILL_AFTER = 3  # Ctrl-C presses after which the job's group gets SIGKILL
Output = Literal["inherit", "stderr", "pipe"]
READ_BYTES = 1 << 20  # one read of the job's output: what the pipe holds (64 KiB) or more
QUIET_S = 0.05  # no output for this long: the live display may be drawn again (a prompt is shown)


class Sink(Protocol):
    """Where a piped job's output goes: each chunk as read (`write`), and a call when it has been quiet for
    QUIET_S (`idle`)."""

    def write(self, data: bytes) -> None: ...

    def idle(self) -> None: ...


def spawn(
    command: tuple[str, ...],
    folder: Path | None,
    output: Output,
    trace: bool = False,
    extra_env: Mapping[str, str] | None = None,
    log: IO[bytes] | None = None,
) -> subprocess.Popen[bytes]:
    """Start COMMAND in a new process group; with `folder`, the hook is on its PYTHONPATH writing there (its
    per-batch spans too with `trace`).
    "pipe": what the job writes to the terminal comes through one pipe (stdout and stderr merged, so their
    order holds; stdout stays the job's own when it is not a terminal, e.g. redirected to a file). `log`:
    its stdout and stderr go there instead, and its stdin is empty (a slice of --apply-and-measure)."""
    env = {k: v for k, v in os.environ.items() if k != TRACE_ENV}
    env.update(extra_env or {})
    if folder is not None:
        env[DIR_ENV] = str(folder)
        env.update({TRACE_ENV: "1"} if trace else {})
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HOOK_DIR), env.get("PYTHONPATH", "")) if p)
    streams: dict[str, Any] = {}
    if output == "stderr":
        streams = {"stdout": sys.stderr.fileno()}
    elif output == "pipe":
        tty = _isatty(sys.stdout)
        streams = (
            {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT} if tty else {"stderr": subprocess.PIPE}
        )
        env.setdefault(
            "PYTHONUNBUFFERED", "1"
        )  # a pipe would hold the job's prints back until its buffer fills
    if log is not None:
        streams = {"stdin": subprocess.DEVNULL, "stdout": log, "stderr": subprocess.STDOUT}
    group: dict[str, Any] = (
        {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
    )
    try:
        with _sigint_not_inherited_ignored():
            return subprocess.Popen(list(command), env=env, **streams, **group)
    except OSError as exc:
        raise BadInputError(f"COMMAND {command[0]!r}: cannot start it ({exc.strerror})") from None


@contextmanager
def _sigint_not_inherited_ignored() -> Iterator[None]:
    """The job starts with SIGINT at its default action even where envguard was started ignoring it (a
    script's `&` job, CI, an IDE): watch forwards Ctrl-C and --duration stops the job with SIGINT, which a job
    that inherited SIG_IGN never sees. The job has its own process group, so only what envguard sends reaches
    it. exec keeps an ignored signal ignored but resets a handled one: a no-op handler (envguard still
    ignores SIGINT meanwhile) held over the start does it, with no code run in the child."""
    try:
        ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        previous = signal.signal(signal.SIGINT, _ignore) if ignored else None
    except ValueError:  # not the main thread (watch inside a notebook): the job inherits what we have
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _ignore(_signum: int, _frame: Any) -> None:
    """SIGINT ignored, as a handler (see `_sigint_not_inherited_ignored`)."""


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def pump(stream: IO[bytes], sink: Sink) -> threading.Thread:
    """Forward the job's output to `sink` chunk by chunk as it is read (never line by line: the job is never
    held back by the display, and the cost is linear in what it writes, with or without line breaks)."""
    fd = stream.fileno()

    def loop() -> None:
        while True:
            ready, _, _ = select.select([fd], [], [], QUIET_S)
            if not ready:
                sink.idle()
                continue
            chunk = os.read(fd, READ_BYTES)
            if not chunk:
                break
            sink.write(chunk)
        sink.idle()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def terminal() -> int | None:
    """The terminal on stdin when envguard is its foreground process group (run from a shell, not in the
    background), else None: only then is there a terminal to hand to the job."""
    try:
        fd = sys.stdin.fileno()
        return fd if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp() else None
    except (AttributeError, ValueError, OSError):
        return None


Handed = tuple[int, Any]  # the terminal's fd and envguard's SIGTTOU handler before the job had it


def hand_terminal(child: subprocess.Popen[bytes]) -> Handed | None:
    """Make the job's process group the terminal's foreground group, as a shell does with a job it starts
    (right after the start, so a Ctrl-C typed at once is the job's): `input()`, `breakpoint()` or a login
    prompt read the terminal (a background job that reads it is stopped by SIGTTIN), and Ctrl-C reaches the
    job once, from the terminal itself. envguard, now in the background, ignores SIGTTOU to keep drawing on
    the terminal and to take it back (`take_back`). None where there is no terminal of ours to hand over."""
    fd = terminal()
    if fd is None or threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    with suppress(OSError):
        os.tcsetpgrp(fd, child.pid)
        os.killpg(child.pid, signal.SIGCONT)  # it read before it had the terminal: SIGTTIN stopped it
    return fd, previous


def take_back(handed: Handed | None) -> None:
    """The terminal is envguard's foreground group's again (its report, the shell's prompt after it)."""
    if handed is None:
        return
    fd, previous = handed
    with suppress(OSError):
        os.tcsetpgrp(fd, os.getpgrp())
    signal.signal(signal.SIGTTOU, previous)


@contextmanager
def forwarding(child: subprocess.Popen[bytes] | None) -> Iterator[None]:
    """While watching, Ctrl-C and SIGTERM go to the job's process group; envguard keeps watching it end."""
    if child is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    presses = [0]

    def forward(signum: int, _frame: Any) -> None:
        presses[0] += 1  # a job that ignores Ctrl-C is killed on the third one
        with suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL if presses[0] >= KILL_AFTER else signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stop(child: subprocess.Popen[bytes]) -> None:
    """--duration reached: SIGINT the job's group (as Ctrl-C would), then SIGTERM, then SIGKILL."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(STOP_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def exit_status(returncode: int) -> int:
    """The job's exit status as a shell reports it: a signal N as 128+N."""
    return returncode if returncode >= 0 else 128 - returncode
