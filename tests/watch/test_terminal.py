"""watch in a person's terminal (issue 28, findings 11 and 12): a job that reads the terminal (`input()`,
`breakpoint()`, a login prompt) gets it instead of stopping on SIGTTIN, and one Ctrl-C ends it; the job's
output passes through the live display as it comes, its cost linear in what the job writes (the line-by-line
display took 92 s for 5 MB of lines that take 0.3 s alone), lines without end included. Real terminals:
`pty`; the display's plumbing is also fed chunks directly, with its writes counted."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from envguard.watch.live import PENDING_MAX, LiveView
from envguard.watch.run import WatchOptions
from tests.helpers import default_signals

ENVGUARD = [sys.executable, "-m", "envguard", "watch", "--no-hook", "--interval", "0.3", "--"]


def _on_a_terminal(
    argv: list[str], typed: list[tuple[str, bytes]], timeout: float = 60.0
) -> tuple[int, bytes]:
    """Run `argv` with a pseudo-terminal as its controlling terminal (stdin, stdout, stderr, as a shell
    starts it); each (marker, keys) types `keys` once `marker` has been shown. (exit code, all it showed);
    a run still going at `timeout` is killed and fails the test."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session leader on the terminal, as a login shell's job
        default_signals()  # as a shell sets them for its foreground job, whatever the suite inherited
        os.environ.pop("COLUMNS", None)
        os.execvp(argv[0], argv)
    seen = b""
    pending = list(typed)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pending and pending[0][0].encode() in seen:
            os.write(fd, pending.pop(0)[1])
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:  # the terminal closed: every process on it is gone
                break
            if not data:
                break
            seen += data
    else:
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail(f"still running after {timeout:.0f} s; it showed: {seen[-600:]!r}")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), seen


def test_a_job_that_reads_the_terminal_gets_it(tmp_path: Path) -> None:
    script = tmp_path / "ask.py"
    script.write_text("name = input('your name? ')\nprint('hello', name)\n")
    code, seen = _on_a_terminal([*ENVGUARD, sys.executable, str(script)], [("your name? ", b"bob\n")])
    assert code == 0, seen[-600:]
    assert b"your name? bob" in seen and b"hello bob" in seen


@pytest.mark.ctrl_c
def test_one_ctrl_c_ends_a_job_waiting_for_input(tmp_path: Path) -> None:
    script = tmp_path / "wait.py"
    script.write_text("import sys\nprint('ready', flush=True)\nsys.stdin.readline()\n")
    code, seen = _on_a_terminal([*ENVGUARD, sys.executable, str(script)], [("ready", b"\x03")])
    assert code == 128 + signal.SIGINT, seen[-600:]
    assert b"KeyboardInterrupt" in seen


def test_the_terminal_is_the_shells_again_after_the_job(tmp_path: Path) -> None:
    """envguard takes the terminal back when the job ends: its own report and exit come through."""
    script = tmp_path / "quick.py"
    script.write_text("print('done')\n")
    code, seen = _on_a_terminal([*ENVGUARD, sys.executable, str(script)], [])
    assert code == 0 and b"done" in seen and b"envguard watch: " in seen


# --- the display's plumbing, fed directly ------------------------------------------------------------------


class _Counted:
    """A LiveView writing into a pipe that a thread drains as a terminal would, the writes counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        read_end, write_end = os.pipe()
        self.view = LiveView(WatchOptions(command=("job",)), write_end, 80)
        self.view.text = "PANEL line 1\nPANEL line 2\n"  # as if a sample had been drawn
        self.writes = 0
        self.chunks: list[bytes] = []
        real = self.view._out

        def out(data: bytes) -> None:
            self.writes += 1
            real(data)

        monkeypatch.setattr(self.view, "_out", out)

        def drain() -> None:
            while chunk := os.read(read_end, 1 << 20):
                self.chunks.append(chunk)

        self.reader = threading.Thread(target=drain, daemon=True)
        self.reader.start()
        self.write_end = write_end

    @property
    def shown(self) -> bytes:
        time.sleep(0.05)  # what was written has reached the reader
        return b"".join(self.chunks)

    def closed(self) -> bytes:
        self.view.close()
        os.close(self.write_end)
        self.reader.join(10)
        return b"".join(self.chunks)


def _job_bytes(shown: bytes) -> bytes:
    """What the terminal showed, less the panel and the sequences that move it."""
    return (
        shown.replace(b"PANEL line 1\nPANEL line 2\n", b"")
        .replace(b"\x1b[2F\x1b[J", b"")
        .replace(b"\x1b[J", b"")
    )


def test_lines_pass_through_in_a_few_writes_whatever_their_number(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("envguard.watch.live.REDRAW_S", 3600.0)  # the panel is drawn only when quiet
    counted = _Counted(monkeypatch)
    lines = b"".join(b"line %d\n" % n for n in range(50_000))
    for start in range(0, len(lines), 65536):  # as a pipe delivers them
        counted.view.write(lines[start : start + 65536])
    counted.view.idle()
    assert _job_bytes(counted.closed()) == lines
    assert counted.writes <= len(lines) // 65536 + 4  # one write per chunk read, never one per line


def test_a_line_without_end_is_written_as_it_comes_and_held_in_bounded_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = _Counted(monkeypatch)
    blob = b"y" * (PENDING_MAX * 8)
    for start in range(0, len(blob), 65536):
        counted.view.write(blob[start : start + 65536])
        assert len(counted.view.pending) <= PENDING_MAX
    counted.view.write(b"end\n")
    assert _job_bytes(counted.closed()) == blob + b"end\n"


def test_a_progress_bar_shows_in_the_panel_and_a_prompt_on_the_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = _Counted(monkeypatch)
    for step in range(3):
        counted.view.write(b"\r%d/3 |###" % step)
    assert counted.view.status == "2/3 |###" and b"2/3" not in counted.shown
    counted.view.idle()  # a bar is no prompt: it stays in the panel
    assert b"2/3" not in counted.shown
    counted.view.write(b"\n")
    assert counted.view.status == "" and b"2/3 |###\n" in counted.shown
    counted.view.write(b"password: ")
    counted.view.idle()  # quiet after a partial line: a prompt, shown where the person types
    assert counted.shown.endswith(b"password: ")
