"""The watched job as a process: start COMMAND in its own process group with the hook on its PYTHONPATH,
forward its output (line by line, progress bars as they stand), forward Ctrl-C and SIGTERM to its group, stop
it when --duration is up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, Literal

from envguard.errors import BadInputError

HOOK_DIR = Path(__file__).parent / "hook"
DIR_ENV = "ENVGUARD_WATCH_DIR"  # where the hook writes its streams (hook/sitecustomize.py reads it)
STOP_GRACE_S = 5.0
KILL_AFTER = 3  # Ctrl-C presses after which the job's group gets SIGKILL
Output = Literal["inherit", "stderr", "pipe"]
Sink = Callable[[str, bool], None]  # (text, complete line?); incomplete: the latest \r progress segment


def spawn(command: tuple[str, ...], folder: Path | None, output: Output) -> subprocess.Popen[bytes]:
    """Start COMMAND in a new process group; with `folder`, the hook is on its PYTHONPATH writing there."""
    env = dict(os.environ)
    if folder is not None:
        env[DIR_ENV] = str(folder)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HOOK_DIR), env.get("PYTHONPATH", "")) if p)
    streams: dict[str, Any] = {}
    if output == "stderr":
        streams = {"stdout": sys.stderr.fileno()}
    elif output == "pipe":
        streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        env.setdefault(
            "PYTHONUNBUFFERED", "1"
        )  # a pipe would hold the job's prints back until its buffer fills
    group: dict[str, Any] = (
        {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
    )
    try:
        return subprocess.Popen(list(command), env=env, **streams, **group)
    except OSError as exc:
        raise BadInputError(f"COMMAND {command[0]!r}: cannot start it ({exc.strerror})") from None


def pump(stream: IO[bytes], sink: Sink) -> threading.Thread:
    """Forward the job's output line by line; a progress bar redrawn with \r (tqdm) is passed as it stands."""

    def loop() -> None:
        pending = b""
        while chunk := os.read(stream.fileno(), 65536):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                sink(line.rsplit(b"\r", 1)[-1].decode(errors="replace"), True)
            if b"\r" in pending:
                head, _, pending = pending.rpartition(b"\r")
                shown = head.rsplit(b"\r", 1)[-1] or pending
                sink(shown.decode(errors="replace"), False)
        if pending:
            sink(pending.decode(errors="replace"), True)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


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
