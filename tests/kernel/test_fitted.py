"""Report lines at the terminal's width (envguard.output.fitted): wrapped under their text, never cut short,
commands wrapped with the shell's continuation; one line each into a pipe."""

from __future__ import annotations

import subprocess

import pytest

from envguard.output import command, fitted

URL = "file:///home/someone/projects/a-rather-long-project-name/channels/pytorch-nightly-mirror"
ROWS: list[tuple[str, str] | str] = [
    "Conda packages",
    ("  [drift] ", f"pytorch 2.1.0 ({URL}): py3.11_cuda11.8_cudnn8.7.0_0 in the lock → py3.11_cpu_0"),
    "How to fix:",
    f"  envguard sync /envs/x --lock {URL}/conda-lock.yml --yes",
]


def test_a_pipe_gets_one_line_each() -> None:
    assert fitted(ROWS, None).splitlines() == [
        ROWS[0],
        "".join(ROWS[1]),
        ROWS[2],
        ROWS[3],
    ]


@pytest.mark.parametrize("width", [60, 80])
def test_lines_wrap_under_their_text_and_commands_wrap_as_the_shell_reads_them(width: int) -> None:
    lines = fitted(ROWS, width).splitlines()
    fix = lines[lines.index("How to fix:") + 1 :]
    assert all(line.endswith(" \\") for line in fix[:-1]) and len(fix) > 1  # the shell's continuation
    assert " ".join(line.removesuffix(" \\").strip() for line in fix) == ROWS[3].strip()  # every word, whole
    # within the width, but a single word longer than the line (a long URL), kept whole
    alone = [line for line in lines if len(line.removesuffix(" \\").split()) == 1]
    assert all((len(line) <= width or line in alone) and line == line.rstrip() for line in lines), lines
    assert "…" not in "".join(lines)
    drift = lines[1 : lines.index("How to fix:")]
    assert drift[0].startswith("  [drift] pytorch 2.1.0") and len(drift) > 1
    assert all(line.startswith(" " * len("  [drift] ")) for line in drift[1:])  # under the text
    words = " ".join(line.strip() for line in drift).split()
    assert " ".join(words).replace(" ", "") == "".join(ROWS[1]).replace(" ", "").strip()  # nothing lost


def test_a_wrapped_command_runs_as_printed() -> None:
    """The words a shell reads from the wrapped lines are the command's own (quotes and escapes kept)."""
    words = [
        "envguard",
        "sync",
        "/envs/it's here",
        "--lock",
        f"{URL}/conda lock.yml",
        "--yes",
        "a\\b",
        "x" * 70,
    ]
    printed = "  " + command(*words) + "   # if the new archives are intended"  # a comment: one piece
    wrapped = fitted(["How to fix:", printed], 60).split("\n", 1)[1]
    assert len(wrapped.splitlines()) > 2
    shell = subprocess.run(
        ["bash", "-c", "printf '%s\\n' " + wrapped.strip().split(" ", 1)[1]],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shell.stdout.splitlines() == words[1:]


def test_short_lines_are_left_as_they_are() -> None:
    rows: list[tuple[str, str] | str] = [("  [drift] ", "numpy 1.26.4: in the lock → not installed"), "x"]
    assert fitted(rows, 80) == "  [drift] numpy 1.26.4: in the lock → not installed\nx\n"
