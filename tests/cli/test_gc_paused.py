"""check, diff, export and lock run whole with the cyclic garbage collector paused (between their readers'
pauses it walked everything those had made), and leave it as they found it."""

from __future__ import annotations

import gc
from typing import Any

import pytest


class _Seen(Exception):
    """Raised by a stand-in for a command's work, once it has looked at the collector."""


def _watching(seen: list[bool]) -> Any:
    def work(*_args: Any, **_kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        raise _Seen

    return work


def _run(monkeypatch: pytest.MonkeyPatch, module: str, name: str, call: Any) -> list[bool]:
    import importlib

    seen: list[bool] = []
    monkeypatch.setattr(importlib.import_module(module), name, _watching(seen))
    assert gc.isenabled()
    with pytest.raises(_Seen):
        call()
    assert gc.isenabled()  # restored
    return seen


def test_check_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    from envguard.cli.commands.check import check

    def call() -> None:
        check.callback(
            "p",
            "l",
            None,
            None,
            False,
            False,
            False,
            "human",
            True,
            False,
            None,
            None,
            None,
            None,
            False,
            None,
        )  # type: ignore[misc]

    assert _run(monkeypatch, "envguard.check.run", "check", call) == [False]


def test_diff_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    from envguard.cli.commands.diff import diff

    def call() -> None:
        diff.callback("a", "b", None, False, False, "human", None)  # type: ignore[misc]

    assert _run(monkeypatch, "envguard.cli.commands.diff", "diff_sources", call) == [False]


def test_export_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    from envguard.cli.commands.export import export

    def call() -> None:
        export.callback("a", None, False, None, "explicit", None, False, None)  # type: ignore[misc]

    assert _run(monkeypatch, "envguard.cli.commands.export", "load", call) == [False]


def test_lock_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    from envguard.cli.commands.lock import lock

    def call() -> None:
        lock.callback("p", None, (), (), None, False, True, "conda-lock", "6", None, False, None)  # type: ignore[misc]

    assert _run(monkeypatch, "envguard.cli.commands.lock", "write_lock", call) == [False]
