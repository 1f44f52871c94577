"""verdicts/pipeline.py (issue 10): whether workers can start under spawn/forkserver, worker start-up per
start method, and order and content across fresh interpreters. Planted datasets/loaders
(tests/pipeline_planted.py) each trigger their verdict and their near-twin does not; real ForkingPickler,
real spawn workers, real fresh interpreters."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from envguard_smoke import crossproc, pickling, startup, user_loader

from envguard.findings import Finding
from envguard.smoke.verdicts import pipeline
from tests.helpers import REPO, by_check, smoke_json, smoke_wire

PLANTED = REPO / "tests" / "pipeline_planted.py"
STARTUP = "worker start-up per start method"


def start_method(record: dict[str, Any], method: str) -> list[Finding]:
    return pipeline.start_method(
        smoke_wire({"start_method_safety": dict(record, method=method)}, "t").start_method_safety
    )


def test_fail_under_spawn_warn_under_fork(planted: ModuleType) -> None:
    record = pickling.check([("dataset", planted.SqliteRows())])
    (spawn,) = start_method(record, "spawn")
    (fork,) = start_method(record, "fork")
    assert spawn.status == "FAIL" and "under spawn" in spawn.evidence and "dataset.conn" in spawn.evidence
    assert fork.status == "WARN" and "would fail under spawn" in fork.evidence and "3.14" in fork.evidence
    (clean,) = start_method(pickling.check([("dataset", planted.LazySqliteRows())]), "spawn")
    assert clean.status == "PASS"


def test_main_phases_are_replaced_by_a_loader_or_workers_that_cannot_start(planted: ModuleType) -> None:
    record = pickling.check([("dataset", planted.SqliteRows())])
    blocked = smoke_wire({"start_method_safety": dict(record, method="spawn")}, "t")
    works = smoke_wire({"start_method_safety": dict(record, method="fork")}, "t")
    assert pipeline.replaces_main_phases(blocked) and not pipeline.replaces_main_phases(works)


@pytest.mark.slow
def test_smoke_under_spawn_fails_naming_the_lambda(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = smoke_json(
        capsys,
        str(prefix),
        "--budget",
        "10",
        "--workers",
        "0,1",
        "--start-method",
        "spawn",
        "--dataset",
        f"{PLANTED}:lambda_transform",
    )
    finding = by_check(data)["workers can start under spawn/forkserver"]
    assert code == 1 and finding["status"] == "FAIL", finding
    assert "dataset.transform.<lambda>" in finding["evidence"] and "module-level function" in finding["fix"]
    assert data["start_method"] == "spawn" and not data["datasets"]  # the sweep would only crash: skipped


# -- cross-process determinism


def cross(name: str, file: Path = PLANTED) -> tuple[dict[str, Any], list[Finding]]:
    record = crossproc.run(
        {"dataset": f"{file}:{name}", "crossproc": {"limit": 16}}, time.perf_counter() + 60
    )
    return record, pipeline.cross_process(smoke_wire({"crossproc": record}, "t").crossproc)


@pytest.mark.slow
def test_set_ordered_file_list_fails_across_interpreters() -> None:
    record, (finding,) = cross("DedupedFiles")
    assert finding.status == "FAIL" and "hold another sample" in finding.evidence, finding
    assert (
        "sorted(set(paths))" in finding.fix and "hash()" not in finding.fix and record["control"] == "1-again"
    )


@pytest.mark.slow
def test_hashed_labels_fail_across_interpreters() -> None:
    _record, (finding,) = cross("HashedLabels")
    assert finding.status == "FAIL" and "changed value in field 1 (the rest" in finding.evidence, finding
    assert "another sample" not in finding.evidence
    assert "zlib.crc32" in finding.fix


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SortedDedupedFiles", "CrcLabels", "NoisyAugment"])
def test_stable_twins_pass_across_interpreters(name: str) -> None:
    record, (finding,) = cross(name)
    assert finding.status == "PASS", finding
    assert record["control"] is None  # no third interpreter when the two agree


@pytest.mark.slow
def test_randomness_on_every_run_is_not_blamed_on_the_hash_salt() -> None:
    """Fresh OS entropy per sample differs between any two interpreters: the control names it, no FAIL."""
    record, (finding,) = cross("Unseeded", REPO / "tests" / "smoke_planted.py")
    assert finding.status == "INFO" and "same PYTHONHASHSEED=1" in finding.evidence, finding
    assert record["control"] == "1-again"


def test_an_interpreter_that_could_not_read_warns() -> None:
    record = {
        "seeds": ["1", "2"],
        "limit": 16,
        "runs": {
            "1": {"error": "ModuleNotFoundError: No module named 'x'"},
            "2": {"order": [], "samples": {}},
        },
        "control": None,
        "seconds": 1.0,
    }
    (finding,) = pipeline.cross_process(smoke_wire({"crossproc": record}, "t").crossproc)
    assert finding.status == "WARN" and "PYTHONHASHSEED=1: ModuleNotFoundError" in finding.evidence


# -- worker start-up per start method (issue 10, item 2)


def startup_of(name: str) -> tuple[dict[str, Any], list[Finding]]:
    settings = {"loader": f"{PLANTED}:{name}"}
    safety = pickling.check(pickling.parts_of(user_loader.factory(settings["loader"])()))
    record = startup.phase(settings, {"start_method_safety": safety})
    return record, pipeline.startup(smoke_wire({"startup": record}, "t").startup)


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="fork is not the default here")
def test_under_fork_the_spawn_start_up_is_measured_and_named() -> None:
    record, (finding,) = startup_of("tuple_collate_loader")
    seconds = record["seconds"]
    assert isinstance(seconds, dict) and sorted(seconds) == ["fork", "spawn"]
    assert all(0.0 < value < 60.0 for value in seconds.values()), seconds
    assert finding.status == "INFO" and "first batch with 2 workers: fork (in use)" in finding.evidence
    assert "under spawn" in finding.evidence and "every epoch (persistent_workers=False)" in finding.evidence
    if seconds["spawn"] >= pipeline.SLOW_SPAWN_S:
        assert "persistent_workers=True" in finding.fix


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="fork is not the default here")
def test_an_unpicklable_loader_is_not_started_under_spawn() -> None:
    record, (finding,) = startup_of("lambda_loader")
    assert list(record["seconds"]) == ["fork"]
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
    assert "spawn (in use)" in checks[STARTUP]["evidence"], checks[STARTUP]
    assert data["pipeline"]["startup"]["in_use"] == "spawn"
    assert data["start_method"] == "spawn"
