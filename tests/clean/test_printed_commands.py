"""The commands `clean` prints run as printed and act on what the run that printed them looked at (issue 43:
every suggested next step works): the dry run's `--yes` line keeps its --cache/--env/--keep-locked/
--keep-recent scope (without it, `--yes` would judge other caches, or lose an environment's protection), and a
clean's `--undo` and `--purge-trash` lines name its caches."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.clean.world import World
from tests.helpers import envguard


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = envguard(*argv)
    return code, capsys.readouterr().out


def _printed(out: str, option: str) -> list[str]:
    """The command in backticks that ends with `option`, shlex-split as a shell would."""
    flat = " ".join(out.split())  # a wrapped line joined again
    [found] = [c for c in re.findall(r"`(envguard clean [^`]*)`", flat) if c.endswith(option)]
    return shlex.split(found)


def _items(capsys: pytest.CaptureFixture[str], *argv: str) -> set[str]:
    code, out = _run(capsys, "clean", "--json", *argv)
    assert code == 0, out
    data: dict[str, Any] = json.loads(out)
    return {i["paths"][0] for i in data["items"]}


def test_the_dry_runs_yes_line_cleans_what_the_dry_run_listed(
    world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    scope = [*world.all_options(), "--cache", str(world.pkgs), "--keep-recent", "0"]
    listed = _items(capsys, *scope)
    assert listed != _items(capsys, "--cache", str(world.pkgs))  # the scope matters
    code, out = _run(capsys, "clean", *scope)
    assert code == 0
    argv = _printed(out, "--yes")
    assert argv[:2] == ["envguard", "clean"]
    code, out = _run(capsys, *argv[1:])
    assert code == 0, out
    assert all(not Path(item).exists() for item in listed), out
    undo = _printed(out, "--undo")
    purge = _printed(out, "--purge-trash")
    assert "--cache" in undo and "--cache" in purge
    code, out = _run(capsys, *undo[1:])
    assert code == 0 and all(Path(item).exists() for item in listed), out
    code, out = _run(capsys, *purge[1:])
    assert code == 0 and "Emptied the trash" in out, out
