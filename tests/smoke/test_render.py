"""render.py: smoke's human view fits the terminal (issue 16): at 80 columns the sweep keeps its primary
figures with whole headers, at 120 every column; nothing is cut short with an ellipsis, every line within the
width. The JSON body keeps its keys, in order, and shows the measured records as the module printed them."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from rich.cells import cell_len

from envguard.output import console_text, document, dumps, text_console
from envguard.smoke import render
from envguard.smoke.report import DatasetResult, PipelineRecords, SmokeOptions, SmokeReport, SweepRow
from envguard.smoke.run import run_smoke
from tests.helpers import smoke_wire


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> SmokeReport:
    """One real smoke run (the test interpreter's torch, real DataLoader workers), rendered at two widths."""
    del tmp_path_factory
    return run_smoke(SmokeOptions(budget_s=10, workers=(0, 2)))


@pytest.mark.parametrize("columns", [80, 120])
def test_the_report_fits_the_terminal(report: SmokeReport, columns: int) -> None:
    text = render.human(report, columns)
    widest = max(text.splitlines(), key=cell_len)
    assert cell_len(widest) <= columns, f"{cell_len(widest)} > {columns}: {widest!r}"
    assert "…" not in text  # no header or cell cut short
    for header in ("workers", "samples/s", "efficiency", "ideal"):
        assert header in text, header
    assert ("others'" in text) is (columns >= 100)  # narrow: secondary columns are left to --json
    assert "Verdicts" in text and "smoke:" in text


def test_columns_honours_the_environment(report: SmokeReport, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = render.human(report)
    assert max(cell_len(line) for line in text.splitlines()) <= 80


def test_narrow_rows_name_their_configuration() -> None:
    rows = (
        SweepRow(2, True, True, samples_per_s=100.0, ideal_per_s=110.0, efficiency=0.91),
        SweepRow(4, False, False, skipped="the budget ran out before this configuration"),
    )
    dataset = DatasetResult("io", "io", 10.0, None, True, rows=rows)
    console = text_console(80)
    console.print(render.sweep_table(dataset, 80))
    text = console_text(console)
    data = text.split("┩", 1)[1]  # the rows, below the header
    assert "2 pin" in data and "persistent" in data and "skipped: the" in data
    assert "…" not in text


KEYS = [
    "schema_version",
    "environment",
    "python",
    "torch",
    "numpy",
    "device",
    "start_method",
    "cpus",
    "shm",
    "datasets",
    "recommendations",
    "determinism",
    "gpu",
    "findings",
    "budget_s",
    "elapsed_s",
    "options",
    "phase_seconds",
    "pipeline",
    "storage",
    "recording",
    "memory",
]


def test_the_json_keeps_its_keys_with_one_schema_version_first(report: SmokeReport) -> None:
    body = render.to_dict(report)
    assert "schema_version" not in body and list(document(body)) == KEYS
    # the machine's default memory limit, set by the module on itself, and the most one process held
    assert body["memory"]["limit_bytes"] >= 2 << 30 and body["memory"]["peak_bytes"] > 0
    determinism = body["determinism"]
    assert list(determinism) == ["dataset", "seed", "samples", "batch_size", "runs", "skipped"]
    assert list(determinism["runs"]["w0"]) == [
        "workers",
        "persistent_workers",
        "order_sha256",
        "stream_sha256",
        "seconds",
    ]
    assert body["options"]["budget_s"] == 10 and body["options"]["workers"] == (0, 2)
    assert (
        body["gpu"] is None and body["pipeline"] == {} and body["storage"] == {} and body["recording"] == {}
    )
    assert dumps(document(body)).startswith('{\n  "schema_version": 1,\n  "environment": ')


# What the in-environment module prints for the sections the report shows as measured (it sorts its keys).
GPU_ON_CUDA = {
    "arch_list": ["sm_80", "sm_90"],
    "capability": "sm_90",
    "device": "cuda",
    "h2d": {
        "bytes": 268435456,
        "link": {
            "available": True,
            "copies_queued": 90,
            "gen": 5,
            "max_gen": 5,
            "max_width": 16,
            "width": 16,
        },
        "pageable_gbps": 10.5,
        "pinned_gbps": 25.1,
        "reps": 5,
    },
    "idle": [
        {
            "batches": 4,
            "busy_ms": 30.0,
            "idle_fraction": None,
            "pin_memory": True,
            "span_ms": 0.0,
            "step_ms": 8.0,
            "warmup_batches": 2,
            "workers": 0,
        }
    ],
    "memory_bytes": 150000000000,
    "name": "NVIDIA H200",
    "roundtrip": {
        "after_device": "a" * 64,
        "bytes": 4816896,
        "equal": True,
        "host": "a" * 64,
        "structure": "dict[image: Tensor, index: Tensor, label: Tensor]",
        "tensors": 3,
    },
    "uuid": "GPU-1234",
}
GPU_ON_CPU = {
    "device": "cpu",
    "h2d": {
        "bytes": 4194304,
        "link": {"available": False, "reason": "not a CUDA device"},
        "pageable_gbps": 3.2,
        "pinned_gbps": None,
        "pinned_reason": "pinned memory needs CUDA",
        "reps": 5,
    },
    "idle": [],
    "idle_skipped": [0, 2],
    "name": "x86_64",
    "roundtrip": GPU_ON_CUDA["roundtrip"],
}
USAGE = {"pss": 120 * 2**20, "uss": 100 * 2**20}
PIPELINE: dict[str, Any] = {
    "crossproc": {
        "control": "1-again",
        "limit": 2,
        "runs": {
            "1": {"order": ["0", "1"], "samples": {"0": {"0": "ab"}, "1": {"0": "cd"}}},
            "1-again": {"order": ["0", "1"], "samples": {"0": {"0": "ab"}, "1": {"0": "cd"}}},
            "2": {"error": "OSError: gone"},
        },
        "seconds": 2.5,
        "seeds": ["1", "2"],
    },
    "loader": {
        "first_batch_s": None,
        "identity": {
            "collate_fn": "default_collate",
            "epochs": [{"batches": 2, "differ": [["1", "3"]], "epoch": 0, "random": 0, "stale": 0}],
            "num_workers": 0,
            "persistent_workers": False,
            "set_epoch": True,
        },
        "limit": 4,
        "run1": [["3", "1", "0", "2"]],
        "run2": [["3", "1", "0", "2"]],
        "settings": {
            "batch_size": 2,
            "collate_fn": "default_collate",
            "dataset": "TensorDataset",
            "generator": True,
            "num_workers": 0,
            "persistent_workers": False,
            "pin_memory": False,
            "prefetch_factor": None,
            "sampler": "RandomSampler",
            "threads": 2,
            "worker_init_fn": None,
        },
    },
    "memory": {
        "culprits": [{"container": "list", "items": ["str"], "length": 400000, "name": "dataset.samples"}],
        "end": {"4711": USAGE, "4712": None},
        "indices": 8192,
        "length": 400000,
        "parent": USAGE,
        "parent_end": USAGE,
        "parent_start": None,
        "sample_bytes": 602112,
        "start": {"4711": USAGE, "4712": None},
        "start_after": 1024,
        "workers": 2,
    },
    "start_method_safety": {
        "checked": ["dataset", "collate_fn"],
        "method": "fork",
        "problems": [
            {
                "error": "PicklingError: Can't pickle <function <lambda>>",
                "fix": "define it at module level",
                "kind": "function",
                "name": "dataset.transform.<lambda>",
                "type": "function",
            }
        ],
    },
    "startup": {
        "in_use": "fork",
        "persistent_workers": False,
        "seconds": {"fork": 0.05, "spawn": 1.2},
        "unpicklable": True,
        "workers": 2,
    },
}


def shown(printed: dict[str, Any], report: SmokeReport) -> dict[str, Any]:
    """The JSON body of `report` with the module's `printed` sections in it (as run_smoke carries them)."""
    measured = smoke_wire(printed, "test")
    pipeline = PipelineRecords(
        start_method_safety=measured.start_method_safety,
        loader=measured.loader,
        memory=measured.memory,
        startup=measured.startup,
        cross_process=measured.crossproc,
    )
    return render.to_dict(dataclasses.replace(report, gpu=measured.gpu, pipeline=pipeline))


@pytest.mark.parametrize("gpu", [GPU_ON_CUDA, GPU_ON_CPU], ids=["cuda", "cpu"])
def test_the_gpu_phase_is_shown_as_the_module_printed_it(report: SmokeReport, gpu: dict[str, Any]) -> None:
    """Keys it prints only on CUDA (capability, the link) or only when it has them (idle_skipped) stay out
    where it left them out; nulls it prints stay."""
    assert json.dumps(shown({"gpu": gpu}, report)["gpu"]) == json.dumps(gpu)


def test_the_pipeline_is_shown_as_the_module_printed_it(report: SmokeReport) -> None:
    body = shown(PIPELINE, report)["pipeline"]
    assert list(body) == ["start_method_safety", "loader", "memory", "startup", "cross_process"]
    for section in ("start_method_safety", "loader", "memory", "startup"):
        assert json.dumps(body[section]) == json.dumps(PIPELINE[section]), section
    assert body["cross_process"] == {
        "seeds": ["1", "2"],
        "limit": 2,
        "seconds": 2.5,
        "control": "1-again",
        "orders": {"1": ["0", "1"], "1-again": ["0", "1"], "2": None},
    }
    iterable = {"iterable": True, "limit": 4, "settings": PIPELINE["loader"]["settings"]}
    assert json.dumps(shown({"loader": iterable}, report)["pipeline"]["loader"]) == json.dumps(iterable)
