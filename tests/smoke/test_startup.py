"""Issue 10, item 2: worker start-up (iter() to the first batch) per start method, with the user's own loader
or dataset: real fork and spawn workers; under fork the report says what spawn would cost."""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

import pytest

from envguard.smoke import pipeline, runner
from tests.helpers import REPO, by_check, smoke_json

PLANTED = REPO / "tests" / "pipeline_planted.py"
sys.path.insert(0, str(runner.PACKAGE_PARENT))  # the in-environment package, as the module imports itself
from envguard_smoke import (  # noqa: E402
    pickling,
    startup,
    user_loader,
)

CHECK = "worker start-up per start method"


def measured(name: str) -> dict[str, object]:
    settings = {"loader": f"{PLANTED}:{name}"}
    safety = pickling.check(pickling.parts_of(user_loader.factory(settings["loader"])()))
    return startup.phase(settings, {"start_method_safety": safety})


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="fork is not the default here")
def test_under_fork_the_spawn_start_up_is_measured_and_named() -> None:
    record = measured("tuple_collate_loader")
    seconds = record["seconds"]
    assert isinstance(seconds, dict) and sorted(seconds) == ["fork", "spawn"]
    assert all(0.0 < value < 60.0 for value in seconds.values()), seconds
    (finding,) = pipeline.startup(record)
    assert finding.status == "INFO" and "first batch with 2 workers: fork (in use)" in finding.evidence
    assert "under spawn" in finding.evidence and "every epoch (persistent_workers=False)" in finding.evidence
    if seconds["spawn"] >= pipeline.SLOW_SPAWN_S:
        assert "persistent_workers=True" in finding.fix


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="fork is not the default here")
def test_an_unpicklable_loader_is_not_started_under_spawn() -> None:
    record = measured("lambda_loader")
    assert list(record["seconds"]) == ["fork"]  # type: ignore[call-overload]
    (finding,) = pipeline.startup(record)
    assert "spawn not measured: the dataset cannot be pickled" in finding.evidence


@pytest.mark.slow
def test_start_method_spawn_reports_its_start_up(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = smoke_json(
        capsys,
        str(prefix),
        "--budget",
        "40",
        "--start-method",
        "spawn",
        "--loader",
        f"{PLANTED}:storage_bound_loader",  # persistent workers: one spawn start per run
    )
    checks = by_check(data)
    assert code in (0, 1), checks
    assert "spawn (in use)" in checks[CHECK]["evidence"], checks[CHECK]
    assert data["pipeline"]["startup"]["in_use"] == "spawn"
    assert data["start_method"] == "spawn"
