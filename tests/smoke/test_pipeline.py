"""Issue 10: the user's input pipeline. Planted datasets/loaders (tests/pipeline_planted.py) each trigger
their verdict and their near-twin does not; real ForkingPickler, real spawn workers, real fresh interpreters.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from torch.utils.data import DataLoader

from envguard.smoke import memory_verdicts, pipeline, runner
from tests.helpers import REPO, by_check, envguard, smoke_json

PLANTED = REPO / "tests" / "pipeline_planted.py"
sys.path.insert(0, str(runner.PACKAGE_PARENT))  # the in-environment package, as the module imports itself
from envguard_smoke import (  # noqa: E402
    crossproc,
    pickling,
    user_loader,
    worker_memory,
)

sys.path.insert(0, str(PLANTED.parent))
import pipeline_planted as planted  # noqa: E402

smoke = smoke_json


# -- start-method safety
# -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "culprit", "fix"),
    [
        (
            "lambda_transform",
            "dataset.transform.<lambda> defined at pipeline_planted.py:",
            "module-level function",
        ),
        ("SqliteRows", "dataset.conn (sqlite3.Connection)", "open it on first use in __getitem__"),
    ],
)
def test_unpicklable_attribute_is_named_with_the_fix_for_its_kind(name: str, culprit: str, fix: str) -> None:
    record = pickling.check([("dataset", getattr(planted, name)())])
    (problem,) = record["problems"]
    assert problem["name"].startswith(culprit) and fix in problem["fix"], problem


@pytest.mark.parametrize("name", ["module_transform", "LazySqliteRows"])
def test_picklable_twins_have_no_problem(name: str) -> None:
    assert pickling.check([("dataset", getattr(planted, name)())]) == {"problems": [], "checked": ["dataset"]}


def test_the_named_dataset_really_fails_to_start_spawn_workers() -> None:
    """The verdict agrees with torch: a spawn DataLoader over the lambda dataset cannot start its workers."""
    loader = DataLoader(planted.lambda_transform(), num_workers=1, multiprocessing_context="spawn")
    with pytest.warns(UserWarning), pytest.raises((AttributeError, TypeError), match="pickle"):
        next(iter(loader))


def test_a_loader_is_checked_through_its_collate_fn() -> None:
    record = pickling.check(pickling.parts_of(planted.lambda_loader()))
    assert [p["name"].split(" ")[0] for p in record["problems"]] == ["collate_fn.<lambda>"]
    assert record["checked"] == ["dataset", "collate_fn"]  # the sampler never reaches a worker


def test_fail_under_spawn_warn_under_fork() -> None:
    record = pickling.check([("dataset", planted.SqliteRows())])
    (spawn,) = pipeline.start_method(dict(record, method="spawn"))
    (fork,) = pipeline.start_method(dict(record, method="fork"))
    assert spawn.status == "FAIL" and "under spawn" in spawn.evidence and "dataset.conn" in spawn.evidence
    assert fork.status == "WARN" and "would fail under spawn" in fork.evidence and "3.14" in fork.evidence
    (clean,) = pipeline.start_method(
        dict(pickling.check([("dataset", planted.LazySqliteRows())]), method="spawn")
    )
    assert clean.status == "PASS"


@pytest.mark.slow
def test_smoke_under_spawn_fails_naming_the_lambda(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = smoke(
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
# -----------------------------------------------------------------------------------
def cross(name: str, file: Path = PLANTED) -> tuple[dict[str, Any], list[Any]]:
    import time

    record = crossproc.run(
        {"dataset": f"{file}:{name}", "crossproc": {"limit": 16}}, time.perf_counter() + 60
    )
    return record, pipeline.cross_process(record)


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


# -- the user's own loader
# ---------------------------------------------------------------------------------------
def test_unseeded_shuffle_fails_and_its_seeded_twin_passes() -> None:
    unseeded = pipeline.own_loader(user_loader.checks({"loader": f"{PLANTED}:unseeded_loader"}, 0.0))
    seeded = pipeline.own_loader(user_loader.checks({"loader": f"{PLANTED}:seeded_loader"}, 0.0))
    bad = {f.check: f for f in unseeded}
    good = {f.check: f for f in seeded}
    assert bad["order repeats across runs"].status == "FAIL", bad
    assert "shuffle without a seeded generator" in bad["order repeats across runs"].evidence
    assert "generator=torch.Generator().manual_seed(SEED)" in bad["order repeats across runs"].fix
    assert good["order repeats across runs"].status == "PASS", good
    assert good["epoch 2 differs from epoch 1"].status == "PASS"


@pytest.mark.slow
def test_smoke_loader_end_to_end(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = smoke(capsys, str(prefix), "--budget", "20", "--loader", f"{PLANTED}:kwargs_loader")
    checks = by_check(data)
    assert code == 0, checks
    for name in (
        "order repeats across runs",
        "epoch 2 differs from epoch 1",
        "workers can start under spawn/forkserver",
        "same samples across interpreter processes",
    ):
        assert checks[name]["status"] == "PASS", checks[name]
    assert data["pipeline"]["loader"]["settings"]["generator"] is True


@pytest.mark.parametrize(
    ("name", "says"),
    [
        (
            "raising_loader",
            "pipeline_planted.py:raising_loader raised FileNotFoundError: /data/imagenet/train",
        ),
        (
            "wrong_type_loader",
            "pipeline_planted.py:wrong_type_loader returned list; expected a torch.utils.data",
        ),
        ("no_such_function", "no_such_function is not a function in pipeline_planted.py"),
    ],
)
def test_bad_loader_functions_are_one_line_exit_2(
    prefix: Path, capsys: pytest.CaptureFixture[str], name: str, says: str
) -> None:
    code = envguard("smoke", str(prefix), "--budget", "10", "--loader", f"{PLANTED}:{name}")
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


# -- per-worker memory
# -------------------------------------------------------------------------------------------
def judged_memory(name: str) -> tuple[dict[str, Any], list[Any]]:
    import time

    from envguard.machine.host import memory_info

    record = worker_memory.measure(
        getattr(planted, name)(),
        workers=2,
        indices=16384,
        batch_size=256,
        seed=0,
        deadline=time.perf_counter() + 30,
    )
    return record, memory_verdicts.worker_memory(record, memory_info().available, workers=8, ranks=8)


def test_large_python_list_warns_with_a_projection() -> None:
    record, (finding,) = judged_memory("PathList")
    assert finding.status == "WARN", finding
    assert "8 workers x 8 local ranks" in finding.evidence and "GiB available" in finding.evidence
    assert "dataset.samples (list of 400,000 str)" in finding.evidence and "numpy array" in finding.fix
    assert len(record["start"]) == 2 and record["indices"] > 8192


def test_numpy_array_twin_passes() -> None:
    record, (finding,) = judged_memory("PathArray")
    assert finding.status == "PASS", finding
    assert record["culprits"] == []


def test_iterable_loader_has_no_order_verdict_and_its_local_class_is_named() -> None:
    built = planted.iterable_loader()
    (order,) = pipeline.own_loader(user_loader.checks({"loader": f"{PLANTED}:iterable_loader"}, 0.0))
    assert order.status == "INFO" and "IterableDataset" in order.evidence
    (problem,) = pickling.check(pickling.parts_of(built))["problems"]
    assert "a class defined inside a function" in problem["name"] and "module level" in problem["fix"]
    assert (
        worker_memory.measure(built.dataset, workers=1, indices=64, batch_size=8, seed=0, deadline=0.0) == {}
    )
