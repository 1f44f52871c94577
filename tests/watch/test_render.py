"""Watch's views over a hand-built run: the JSON body's shape (schema_version added once by output, the job's
environment, each loader's data wait, the timeline, the raw samples), the 80-column report and Markdown."""

from __future__ import annotations

import dataclasses
import json

import pytest

from envguard.output import render as present_as
from envguard.watch import render
from envguard.watch.records import HookStatus, JobEnvironment, WatchRun
from envguard.watch.result import Change, WatchResult
from envguard.watch.verdicts import watch_result
from envguard.watch.verdicts.checked import judge_checked
from tests.watch.helpers import loader, proc, run, sample

ENV = JobEnvironment("3.11.7", "/env/bin/python", "2.3.1+cu121", "12.1", "abc", "1.26.4", None)
ACTIVE = HookStatus("active", (), ENV)


def watched(hook: HookStatus) -> WatchRun:
    samples = tuple(
        sample(
            float(t), (proc(10, 1, "main", 40.0), proc(11, 10, "worker", 5.0)), (loader(t * 25, t * 1.5, t),)
        )
        for t in range(1, 5)
    )
    return run(samples, hook=hook)


def result(hook: HookStatus = ACTIVE) -> WatchResult:
    return watch_result(watched(hook))


def test_json_document_shape() -> None:
    document = json.loads(present_as(render.views(result()), "json"))
    assert list(document) == [
        "schema_version",
        "run",
        "environment",
        "data_wait_fraction",
        "fix",
        "load",
        "data_wait_per_batch",
        "diagnosis",
        "timeline",
        "samples",
    ]
    assert document["schema_version"] == 1 and "schema_version" not in render.to_dict(result())
    assert document["environment"] == document["run"]["hook"]["env"]
    assert document["environment"]["torch_cuda"] == "12.1"
    (totals,) = document["run"]["loaders"]
    assert totals["data_wait_fraction"] == 0.6 and totals["settings"]["num_workers"] == 2
    assert "samples" not in document["run"] and len(document["samples"]) == 4
    assert list(document["timeline"][0]) == [
        "t",
        "data_wait_fraction",
        "batches_per_s",
        "cpu",
        "job_cores",
        "gpu_util",
        "disk_read_mb_s",
    ]
    assert document["diagnosis"]["recommendation"]["setting"] == "num_workers"


def test_without_hook_data_the_environment_is_empty() -> None:
    body = json.loads(present_as(render.views(result(HookStatus("no-loader"))), "json"))
    assert body["environment"] == {} and body["run"]["hook"] == {
        "state": "no-loader",
        "errors": [],
        "env": {},
    }
    assert "environment: unknown" in render.human(result(HookStatus("no-loader")))


def test_report_and_markdown() -> None:
    text = render.human(result())
    assert text.startswith("envguard watch: python train.py\n  python 3.11.7, torch 2.3.1+cu121 (CUDA 12.1)")
    assert (
        "\nwhy: input-bound: the loop waits for data 60% of the time" in text
        and "\n  num_workers=6 (from 2)" in text
    )
    assert "num_workers=2 batch_size=4 pin_memory=False" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    markdown = render.markdown(result())
    assert markdown.startswith("### envguard watch: `python train.py`\n\n_python 3.11.7")
    assert (
        "\n**Fix: `DataLoader(num_workers=6, persistent_workers=True)`**" in markdown
        and "| Status | Category |" in markdown
    )


def test_the_report_never_splits_code_in_its_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 80-column report lays its table out for 80 columns, whatever the terminal's width."""
    monkeypatch.setenv("COLUMNS", "200")
    diagnosis = result().diagnosis
    fix = "DataLoader(num_workers=32, prefetch_factor=2, persistent_workers=False, pin_memory=False)"
    finding = dataclasses.replace(diagnosis.findings[0], fix=f"num_workers=32 (from 2): {fix}")
    text = render.human(WatchResult(watched(ACTIVE), dataclasses.replace(diagnosis, findings=(finding,))))
    words = {word.strip("│(),;") for line in text.splitlines() for word in line.split()}
    assert {"DataLoader(num_workers=32", "persistent_workers=False", "FAIL", "Status"} <= words
    assert "input pipeline" in text and max(len(line) for line in text.splitlines()) <= 80


def test_the_fix_comes_first_in_one_short_line_then_why_and_the_load() -> None:
    text = render.human(result())
    verdict = text.split("\n\n", 1)[1].splitlines()
    assert verdict[0] == "fix: DataLoader(num_workers=6, persistent_workers=True), expected ~2.50x"
    assert verdict[1].startswith("why: input-bound: the loop waits for data 60% of the time")
    load = next(line for line in verdict if line.startswith("load: "))
    assert "other processes 0.6 cores" in load and "host 1.0 of 2 cores busy" in load, load
    body = render.to_dict(result())
    assert body["fix"] == "DataLoader(num_workers=6, persistent_workers=True)"
    assert body["load"]["busy_cores"] == 1.0 and body["load"]["others_cores"] == 0.55


def test_the_thread_advice_names_the_call() -> None:
    base = result()
    change = Change("threads", 1, "torch.set_num_threads(1) (from 4) first: ...", None, rule="threads")
    text = render.human(WatchResult(base.run, dataclasses.replace(base.diagnosis, recommendation=change)))
    assert text.split("\n\n", 1)[1].startswith("fix: torch.set_num_threads(1)\n")


def test_per_batch_data_wait_percentiles() -> None:
    waits = tuple(0.001 * n for n in range(1, 101))  # 1..100 ms
    samples = tuple(
        sample(float(t), (proc(10, 1, "main", 40.0),), (loader(t * 25, t * 1.5, t, waits=waits),))
        for t in range(1, 5)
    )
    watched_run = run(samples, hook=ACTIVE)
    text = render.human(watch_result(watched_run))
    assert "data wait per batch: p50 50.5 ms, p95 95.1 ms (100 of 100 batches sampled)" in text, text
    body = render.to_dict(watch_result(watched_run))
    assert body["data_wait_per_batch"] == {"p50_s": 0.0505, "p95_s": 0.09505, "sampled": 100, "batches": 100}
    assert body["run"]["loaders"][0]["data_wait_p95_s"] == 0.09505


def test_checked_advice_is_in_every_view() -> None:
    """--apply-and-measure's verdict: under the fix in the report and Markdown, diagnosis.checked in JSON."""
    base = result()
    checked = judge_checked("DataLoader(num_workers=4)", (30.0, 32.0), (20.0, 21.0), 2.0)
    checked_result = dataclasses.replace(base, diagnosis=dataclasses.replace(base.diagnosis, checked=checked))
    text = render.human(checked_result)
    assert "\n=> the advice did not hold here: DataLoader(num_workers=4) measured 0.66x" in text
    assert "keep the current setting" in text.replace("\n", " ")
    assert "\nChecked: the advice did not hold here: " in render.markdown(checked_result)
    document = json.loads(present_as(render.views(checked_result), "json"))
    assert document["diagnosis"]["checked"]["verdict"] == "contradicts"
    assert document["diagnosis"]["checked"]["current_rates"] == [30.0, 32.0]
    assert render.to_dict(base)["diagnosis"]["checked"] is None
