"""measured.decode: the module's JSON line decoded once into msgspec records, type-checked on the way;
anything malformed is one ProbeError line naming where in the output it is (`$.throughput[0]`, exit 3), never
a KeyError traceback further down."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import msgspec.inspect
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typing_extensions import is_typeddict

from envguard.errors import ProbeError
from envguard.pipeline.costs import Setting
from envguard.smoke import measured, measured_pipeline
from envguard.smoke.envguard_smoke import schema
from envguard.smoke.measured import Measured
from tests.helpers import smoke_wire


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
    measured = smoke_wire(printed, "/env/bin/python")
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
    measured = smoke_wire(printed, "python")
    io, cpu = measured.datasets
    assert io.rows == () and io.length == 512 and io.profile is None
    assert [r.skipped for r in cpu.rows] == ["", "budget"] and cpu.rows[0].arrivals_s[0] > 0
    assert measured.phase_seconds == {"start-up": 1.5, "determinism": 0.4}
    assert measured.determinism is None and measured.gpu is None and measured.stopped is None


@pytest.mark.parametrize(
    ("printed", "where"),
    [
        ([1, 2], "Expected `object`, got `array`"),
        ({"python": 3.11}, "Expected `str | null`, got `float` - at `$.python`"),
        ({"throughput": {"name": "io"}}, "Expected `array`, got `object` - at `$.throughput`"),
        ({"throughput": [{"rows": []}]}, "Object missing required field `name` - at `$.throughput[0]`"),
        (
            {"throughput": [{"name": "io", "rows": [{"workers": "2"}]}]},
            "Expected `int`, got `str` - at `$.throughput[0].rows[0].workers`",
        ),
        (
            {"throughput": [{"name": "io", "rows": [{"workers": 2, "pin_memory": 1, "arrivals_s": [0.1]}]}]},
            "Expected `bool`, got `int` - at `$.throughput[0].rows[0].pin_memory`",
        ),
        (
            {"throughput": [{"name": "io", "rows": [{"workers": 2, "arrivals_s": [0.1, "x"]}]}]},
            "Expected `float`, got `str` - at `$.throughput[0].rows[0].arrivals_s[1]`",
        ),
        (
            {"determinism": {"seed": 1, "batch_size": 4, "limit": 8, "runs": {"w0": []}}},
            "Expected `object`, got `array` - at `$.determinism.runs[...]`",
        ),
        (
            {"gpu": {"device": "cuda", "name": "x", "h2d": {"bytes": 1, "reps": 1}}},
            "missing required field `pageable_gbps` - at `$.gpu.h2d`",
        ),
        ({"phase_seconds": {"gpu": None}}, "got `null` - at `$.phase_seconds[...]`"),
        (
            {"golden": {"torch_randperm": "ab", "cuda_arch_list": 5}},
            "got `int` - at `$.golden.cuda_arch_list`",
        ),
    ],
)
def test_malformed_output_is_one_probe_error_line_naming_the_place(printed: object, where: str) -> None:
    with pytest.raises(ProbeError) as raised:
        smoke_wire(printed, "/env/bin/python")
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
        measured = smoke_wire(json.loads(json.dumps(printed)), "python")
    except ProbeError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(measured, Measured)


# fields the host sets on what it decoded (the budget's stop, its own view of the memory), never printed
HOST_ONLY = {"Measured": {"stopped"}, "MemoryUse": {"oom_kills", "killed", "held_bytes"}}


def test_the_module_and_the_host_spell_each_record_and_key_alike() -> None:
    """The module's TypedDicts and the host's Structs: the same records, each with the same keys."""
    printed = {name: kind for name, kind in vars(schema).items() if is_typeddict(kind)}
    decoded: dict[str, Any] = {
        name: kind
        for module in (measured, measured_pipeline)
        for name, kind in vars(module).items()
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct) and kind.__module__ == module.__name__
    }
    decoded["Setting"] = Setting  # the one DataLoader settings type, decoded as it is
    assert sorted(printed) == sorted(set(decoded) - {"Record", "Stopped"})
    for name, typed in printed.items():
        info = msgspec.inspect.type_info(decoded[name])
        keys = {field.encode_name for field in info.fields}  # type: ignore[attr-defined]
        assert set(typed.__annotations__) == keys - HOST_ONLY.get(name, set()), name
