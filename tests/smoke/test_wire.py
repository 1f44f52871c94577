"""wire.py: the module's JSON line read once into records, type-checked on the way; anything malformed is one
ProbeError line naming where in the output it is (exit 3), never a KeyError traceback further down."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envguard.errors import ProbeError
from envguard.smoke import wire
from envguard.smoke.measured import Measured


def test_a_refusal_is_read_without_any_phase() -> None:
    """What the module prints under an interpreter without torch."""
    printed = {
        "determinism": None,
        "error": "torch-missing",
        "errors": [],
        "executable": "/env/bin/python",
        "golden": None,
        "gpu": None,
        "python": "3.10.14",
        "throughput": [],
    }
    measured = wire.parse(printed, "/env/bin/python")
    assert measured == Measured(python="3.10.14", executable="/env/bin/python", refusal="torch-missing")


def test_results_so_far_are_read_with_what_they_have(sweep_row: Callable[..., dict[str, Any]]) -> None:
    """Stopped at the budget: an entry whose sweep had not begun has no rows; a row skipped, one measured."""
    printed = {
        "device": "cpu",
        "phase_seconds": {"start-up": 1.5, "determinism": 0.4},
        "throughput": [
            {
                "name": "io",
                "nominal_cpu_ms": 0.0,
                "nominal_latency_ms": 10.0,
                "length": 512,
                "iterable": False,
            },
            {
                "name": "cpu",
                "nominal_cpu_ms": 5.0,
                "nominal_latency_ms": 5.0,
                "rows": [
                    sweep_row(0, 100.0),
                    {"persistent_workers": False, "pin_memory": False, "skipped": "budget", "workers": 2},
                ],
            },
        ],
    }
    measured = wire.parse(printed, "python")
    io, cpu = measured.datasets
    assert io.rows == () and io.length == 512 and io.profile is None
    assert [r.skipped for r in cpu.rows] == ["", "budget"] and cpu.rows[0].times.arrivals_s[0] > 0
    assert measured.phase_seconds == {"start-up": 1.5, "determinism": 0.4}
    assert measured.determinism is None and measured.gpu is None and measured.stopped is None


@pytest.mark.parametrize(
    ("printed", "where"),
    [
        ([1, 2], "(the output: expected an object, got list)"),
        ({"python": 3.11}, "python: expected text, got float"),
        ({"throughput": {"name": "io"}}, "throughput: expected a list, got dict"),
        ({"throughput": [{"rows": []}]}, "throughput[0].name: missing (expected text)"),
        (
            {"throughput": [{"name": "io", "rows": [{"workers": "2"}]}]},
            "throughput[0].rows[0].workers: expected a whole number, got str",
        ),
        (
            {"throughput": [{"name": "io", "rows": [{"workers": 2, "pin_memory": 1, "arrivals_s": [0.1]}]}]},
            "throughput[0].rows[0].pin_memory: expected true or false, got int",
        ),
        (
            {"throughput": [{"name": "io", "rows": [{"workers": 2, "arrivals_s": [0.1, "x"]}]}]},
            "throughput[0].rows[0].arrivals_s[1]: expected a number, got str",
        ),
        (
            {"throughput": [{"name": "io", "rows": [{"workers": 2, "arrivals_s": [0.1], "batch_size": 8}]}]},
            "throughput[0].rows[0].batches: missing (expected a whole number)",
        ),
        (
            {"determinism": {"seed": 1, "batch_size": 4, "limit": 8, "runs": {"w0": []}}},
            "determinism.runs.w0",
        ),
        ({"gpu": {"device": "cuda", "name": "x", "h2d": {"bytes": 1, "reps": 1}}}, "gpu.h2d.link: missing"),
        ({"phase_seconds": {"gpu": None}}, "phase_seconds.gpu: expected a number, got null"),
        ({"golden": {"torch_randperm": "ab", "cuda_arch_list": 5}}, "golden.cuda_arch_list: expected a list"),
    ],
)
def test_malformed_output_is_one_probe_error_line_naming_the_place(printed: object, where: str) -> None:
    with pytest.raises(ProbeError) as raised:
        wire.parse(printed, "/env/bin/python")
    message = str(raised.value)
    assert (
        message.startswith("/env/bin/python: the smoke test printed malformed output (") and where in message
    )
    assert "\n" not in message and "reinstall envguard" in message


FIELDS = st.sampled_from(
    ["name", "rows", "workers", "arrivals_s", "seed", "runs", "h2d", "settings", "limit"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.floats(0, 2) | st.sampled_from(["", "io", "w0"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(FIELDS, inner, max_size=3),
    max_leaves=10,
)
KEYS = st.sampled_from(
    [
        "python",
        "throughput",
        "determinism",
        "gpu",
        "loader",
        "memory",
        "startup",
        "crossproc",
        "record",
        "errors",
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, JSON, max_size=4))
def test_any_json_is_read_or_refused_in_one_line(printed: dict[str, Any]) -> None:
    """Whatever a broken or foreign module prints: records, or one ProbeError (never another exception)."""
    try:
        measured = wire.parse(json.loads(json.dumps(printed)), "python")
    except ProbeError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(measured, Measured)
