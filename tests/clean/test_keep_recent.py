"""`clean --keep-recent DURATION` (issue 43): what the package cache got in the last DURATION (default 1h: a
running conda may still be linking it) is kept; `0` keeps nothing back, so a user who has just removed an
environment can free its packages now. Judged by the real files' modification times."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from envguard.clean.plan import keep_recent_seconds
from envguard.errors import UsageError
from tests.clean.world import World, names
from tests.helpers import envguard

JUST_REMOVED = "requests-2.32.3-pyhd8ed1ab_0"  # unused, extracted 30 minutes ago
RECENT = "recent (a running conda may still be extracting or linking it)"


def clean_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert envguard("clean", "--json", *argv) == 0, capsys.readouterr().err
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _extracted_minutes_ago(pkgs: Path, name: str, minutes: float) -> None:
    when = time.time() - minutes * 60
    os.utime(pkgs / name, (when, when))


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ((), True),
        (("--keep-recent", "1h"), True),
        (("--keep-recent", "2h"), True),
        (("--keep-recent", "20m"), False),
    ],
)
def test_a_package_younger_than_the_duration_is_kept(
    world: World, capsys: pytest.CaptureFixture[str], given: tuple[str, ...], kept: bool
) -> None:
    _extracted_minutes_ago(world.pkgs, JUST_REMOVED, 30)
    data = clean_json(capsys, *world.all_options(), *given)
    assert (JUST_REMOVED in names(data, "unused-package", world.pkgs)) is not kept
    assert (data["kept"].get(RECENT, 0) >= 1) is kept


def test_zero_keeps_nothing_back(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    _extracted_minutes_ago(world.pkgs, JUST_REMOVED, 0)
    data = clean_json(capsys, *world.all_options(), "--keep-recent", "0")
    assert JUST_REMOVED in names(data, "unused-package", world.pkgs)
    assert "numpy-3.0.0-py311h0_0.conda.partial" in names(data, "partial-download")  # written just now
    assert RECENT not in data["kept"] and "recent temporary file (a running download?)" not in data["kept"]


@pytest.mark.parametrize("text", ["soon", "-1h", "1w", "h", "1.5.2h", "nan", "inf"])
def test_a_bad_duration_is_exit_2_in_one_line(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert envguard("clean", "--keep-recent", text) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--keep-recent {text}" in err[0] and "30m" in err[0], err


@pytest.mark.parametrize(
    ("text", "seconds"), [("0", 0), ("45s", 45), ("30m", 1800), ("2h", 7200), ("1d", 86400), ("1.5h", 5400)]
)
def test_durations(text: str, seconds: float) -> None:
    assert keep_recent_seconds(text) == seconds
    with pytest.raises(UsageError):
        keep_recent_seconds(text + "x")
