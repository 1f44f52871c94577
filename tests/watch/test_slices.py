"""--apply-and-measure's host side, without running a job: which change a slice puts in (or the one line
saying why none), and its wire as the hook inside the job decodes it."""

from __future__ import annotations

import json

import pytest

from envguard.pipeline.costs import BatchCosts, Cores, Pipeline, Setting
from envguard.watch.hook._envguard_apply import Slice
from envguard.watch.records import HookStatus, WatchRun
from envguard.watch.result import Change, Diagnosis
from envguard.watch.slices import Override, override_of
from tests.watch.helpers import loader, run, sample

NOW = Setting(num_workers=0, pin_memory=False, batch_size=4, dataset="Images")
ADVISED = Setting(num_workers=4, prefetch_factor=2, persistent_workers=True)
WATCHED = run((sample(1.0), sample(2.0, loaders=(loader(100, 6.0, 4.0, workers=0, settings=NOW),))))


def _diagnosis(change: Change | None) -> Diagnosis:
    pipeline = Pipeline(costs=BatchCosts(0.02, 0.0, 0.005), cores=Cores(2), current=Setting())
    return Diagnosis("input-bound", "in-main", "input-bound: ...", 0.6, 10.0, (), change, pipeline)


def test_the_advised_dataloader_setting_goes_to_the_dominant_loaders_dataset() -> None:
    change = Change("num_workers", 4, "num_workers=4 (from 0)", 3.0, advised=ADVISED)
    found = override_of(WATCHED, _diagnosis(change))
    assert found == Override("Images", settings=ADVISED)
    assert isinstance(found, Override)
    assert found.text() == (
        "DataLoader(num_workers=4, prefetch_factor=2, persistent_workers=True, pin_memory=False)"
    )


def test_the_thread_advice_goes_in_as_a_thread_count() -> None:
    found = override_of(WATCHED, _diagnosis(Change("threads", 1, "torch.set_num_threads(1)", None)))
    assert found == Override("Images", threads=1)
    assert isinstance(found, Override) and found.text() == "torch.set_num_threads(1)"


@pytest.mark.parametrize(
    ("watched", "change", "why"),
    [
        (run(WATCHED.samples, command=()), None, "--pid attaches to a running job"),
        (run(WATCHED.samples, hook=HookStatus("off")), None, "the in-process hook was off"),
        (WATCHED, None, "there is no advice to check (input-bound)"),
        (WATCHED, Change("storage", None, "the disk", None), "the advice (storage) changes no DataLoader"),
        (WATCHED, Change("keep", None, "keep", 1.0, advised=Setting()), "the advice (keep) changes no"),
    ],
)
def test_where_nothing_can_be_checked_it_says_why_in_one_line(
    watched: WatchRun, change: Change | None, why: str
) -> None:
    found = override_of(watched, _diagnosis(change))
    assert isinstance(found, str) and found.startswith(why) and "\n" not in found


@pytest.mark.parametrize(
    "override",
    [
        Override("Images", settings=ADVISED),
        Override(None, threads=2),
        Override("Images", Setting(0, 2, True)),
    ],
)
def test_the_wire_is_what_the_hook_decodes(override: Override) -> None:
    decoded = Slice(override.wire(15.0, 1000))
    assert decoded.error == ""
    assert (decoded.dataset, decoded.threads, decoded.seconds, decoded.batches) == (
        override.dataset,
        override.threads,
        15.0,
        1000,
    )
    wanted = override.settings
    if wanted is None:
        assert decoded.settings == {}
        return
    assert decoded.settings["num_workers"] == wanted.num_workers
    assert decoded.settings["pin_memory"] == wanted.pin_memory
    # torch refuses prefetch_factor and persistent_workers without workers
    assert decoded.settings["persistent_workers"] == (wanted.persistent_workers and wanted.num_workers > 0)
    assert decoded.settings["prefetch_factor"] == (wanted.prefetch_factor if wanted.num_workers else None)
    assert json.loads(override.wire(15.0, 1000))["dataset"] == override.dataset


def test_the_thread_finding_of_a_run_that_is_not_input_bound_goes_in_too() -> None:
    """A CPU step on 4 threads and 2 cores that does not wait for data: no recommendation, but the thread
    advice (a WARN finding) is what to check."""
    costs = BatchCosts(0.001, 0.0, 0.04, step_cpu=0.08)
    pipeline = Pipeline(costs=costs, cores=Cores(2), current=Setting(), step_threads=4)
    diagnosis = Diagnosis("not input-bound", "", "not input-bound: ...", 0.02, 20.0, (), None, pipeline)
    found = override_of(WATCHED, diagnosis)
    assert isinstance(found, Override), found
    assert found.threads is not None and 1 <= found.threads < 4 and found.settings is None
