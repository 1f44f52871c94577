"""Report lines at the terminal's width (envguard.output.fitted): wrapped under their text, never cut short,
commands whole; one line each into a pipe."""

from __future__ import annotations

import pytest

from envguard.output import fitted

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
def test_lines_wrap_under_their_text_and_commands_stay_whole(width: int) -> None:
    lines = fitted(ROWS, width).splitlines()
    command = ROWS[3]
    assert command in lines and lines[-1] == command  # a command is one line: it copies whole
    others = [line for line in lines if line != command]
    assert all(len(line) <= width and line == line.rstrip() for line in others), lines
    assert "…" not in "".join(lines)
    drift = lines[1 : lines.index("How to fix:")]
    assert drift[0].startswith("  [drift] pytorch 2.1.0") and len(drift) > 1
    assert all(line.startswith(" " * len("  [drift] ")) for line in drift[1:])  # under the text
    words = " ".join(line.strip() for line in drift).split()
    assert " ".join(words).replace(" ", "") == "".join(ROWS[1]).replace(" ", "").strip()  # nothing lost


def test_short_lines_are_left_as_they_are() -> None:
    rows: list[tuple[str, str] | str] = [("  [drift] ", "numpy 1.26.4: in the lock → not installed"), "x"]
    assert fitted(rows, 80) == "  [drift] numpy 1.26.4: in the lock → not installed\nx\n"
