"""The CLI entry points under hostile files: exit 0, 1 or 2 with no traceback, never 4 (a bug) or a hang."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.strategies import JSON, LINE, LOCK_DATA, LOCK_PATHS, RECORD, TEXT, mutate
from tests.helpers import envguard


def _run(capsys: Any, *argv: str) -> None:
    code = envguard(*argv)
    err = capsys.readouterr().err
    assert code in (0, 1, 2), err
    assert "Traceback" not in err and "internal error" not in err, err


@given(LOCK_PATHS, JSON, st.sampled_from(["diff", "export", "snapshot"]))
def test_commands_on_a_mutated_lock(tmp_path_factory, capsys, path, value, command) -> None:
    lock = tmp_path_factory.mktemp("lock") / "conda-lock.yml"
    lock.write_text(yaml.safe_dump(mutate(LOCK_DATA, path, value), allow_unicode=True))
    argv = {
        "diff": ["diff", str(lock), str(lock)],
        "export": ["export", str(lock), "--format", "explicit"],
        "snapshot": ["snapshot", str(lock), "--no-probe"],
    }[command]
    _run(capsys, *argv)


@given(
    st.sampled_from(
        ["@EXPLICIT\n", "name: x\ndependencies:\n", "version: 1\nmetadata:\n", '{"schema_version": 1']
    ),
    TEXT,
)
def test_diff_on_hostile_text_files(tmp_path_factory, capsys, head, text) -> None:
    path = tmp_path_factory.mktemp("txt") / "input"
    path.write_text(head + text, encoding="utf-8", errors="surrogatepass")
    _run(capsys, "diff", str(path), str(path))


@given(st.sampled_from([*RECORD, "size", "constrains", "requested_spec"]), JSON, st.lists(LINE, max_size=5))
def test_snapshot_of_a_prefix_with_a_hostile_record(tmp_path_factory, capsys, key, value, history) -> None:
    prefix = tmp_path_factory.mktemp("env")
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta" / "zlib-1.3.1-h0_0.json").write_text(json.dumps({**RECORD, key: value}))
    (prefix / "conda-meta" / "history").write_text("==> 2024-01-01 00:00:00 <==\n" + "\n".join(history))
    _run(capsys, "snapshot", str(prefix), "--no-probe")
