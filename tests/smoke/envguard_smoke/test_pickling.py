"""pickling.py: what a spawn/forkserver worker receives is pickled with multiprocessing's ForkingPickler; the
deepest attribute that fails is named with the fix for its kind (planted datasets and loaders)."""

from __future__ import annotations

from types import ModuleType

import pytest
from envguard_smoke import pickling
from torch.utils.data import DataLoader


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
def test_unpicklable_attribute_is_named_with_the_fix_for_its_kind(
    name: str, culprit: str, fix: str, planted: ModuleType
) -> None:
    record = pickling.check([("dataset", getattr(planted, name)())])
    (problem,) = record["problems"]
    assert problem["name"].startswith(culprit) and fix in problem["fix"], problem


@pytest.mark.parametrize("name", ["module_transform", "LazySqliteRows"])
def test_picklable_twins_have_no_problem(name: str, planted: ModuleType) -> None:
    assert pickling.check([("dataset", getattr(planted, name)())]) == {"problems": [], "checked": ["dataset"]}


def test_the_named_dataset_really_fails_to_start_spawn_workers(planted: ModuleType) -> None:
    """The verdict agrees with torch: a spawn DataLoader over the lambda dataset cannot start its workers."""
    loader = DataLoader(planted.lambda_transform(), num_workers=1, multiprocessing_context="spawn")
    with pytest.warns(UserWarning), pytest.raises((AttributeError, TypeError), match="pickle"):
        next(iter(loader))


def test_a_loader_is_checked_through_its_collate_fn(planted: ModuleType) -> None:
    record = pickling.check(pickling.parts_of(planted.lambda_loader()))
    assert [p["name"].split(" ")[0] for p in record["problems"]] == ["collate_fn.<lambda>"]
    assert record["checked"] == ["dataset", "collate_fn"]  # the sampler never reaches a worker


def test_a_local_class_is_named(planted: ModuleType) -> None:
    (problem,) = pickling.check(pickling.parts_of(planted.iterable_loader()))["problems"]
    assert "a class defined inside a function" in problem["name"] and "module level" in problem["fix"]
