"""The width of human views: COLUMNS honoured, else the terminal's, else a fixed width for pipes."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from envguard.findings import Finding, table
from envguard.output import PIPE_WIDTH, terminal_width, text_console

PRINT_WIDTH = "from envguard.output import terminal_width; print(terminal_width())"
TO_STDERR = "import sys; from envguard.output import terminal_width; sys.stderr.write(str(terminal_width()))"


def test_columns_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "83")
    assert terminal_width() == 83 and text_console().width == 83


def test_a_pipe_gets_the_pipe_width() -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-c", PRINT_WIDTH], capture_output=True, text=True, env=env, check=True
    )
    assert int(done.stdout) == PIPE_WIDTH


def test_a_terminal_gets_its_own_width() -> None:
    """A real pseudo-terminal sized 91 columns (stdout and stderr on it)."""
    import fcntl
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 91, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-c", TO_STDERR],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
        check=True,
    )
    os.close(follower)
    os.close(leader)
    assert int(done.stderr) == 91


@pytest.mark.parametrize("columns", [80, 120])
def test_findings_table_fits_without_cutting_words(columns: int) -> None:
    findings = [
        Finding(
            "throughput: synthetic", "persistent_workers", "WARN", "worker start-up 2.5 s per epoch", "x"
        ),
        Finding("throughput: synthetic", "samples/s at num_workers=4", "PASS", "1234.5 samples/s"),
    ]
    console = text_console(columns)
    console.print(table(findings, "Checklist", columns))
    text = console.file.getvalue()
    assert max(len(line) for line in text.splitlines()) <= columns and "…" not in text
    assert "persistent_workers" in text and "samples/s at" in text


@pytest.mark.parametrize("columns", [60, 80, 100, 120])
def test_findings_table_never_splits_an_identifier(columns: int) -> None:
    """Lines break at spaces only: `num_worker s=32` or `persistent_workers=Fa lse` is not what to type."""
    fix = (
        "num_workers=32 (from 4): the loader sleeps on I/O 95% of each batch; DataLoader(num_workers=32, "
        "prefetch_factor=2, persistent_workers=False, pin_memory=False); expected ~2.94x (8.1 -> 23.8 "
        "batches/s); persistent_workers=True saves 0.8 s per epoch"
    )
    evidence = "wait 8.2 s of 10.5 s loop over 200 batches (19.1/s); 4 workers at 12% CPU; iowait 0%"
    findings = [Finding("input pipeline", "input-bound: I/O/latency-bound workers", "FAIL", evidence, fix)]
    console = text_console(columns)
    console.print(table(findings, "Findings", columns))
    lines = console.file.getvalue().splitlines()
    assert max(len(line) for line in lines) <= columns
    words = {word.strip("│(),;") for line in lines for word in line.split()}
    assert {"num_workers=32", "persistent_workers=False", "persistent_workers=True"} <= words, words
    assert "DataLoader(num_workers=32" in words
