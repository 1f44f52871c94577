"""A rank's report as the plain data gathered across ranks, and back: nothing lost, failures kept apart."""

from __future__ import annotations

import json
from collections.abc import Callable

from envguard.distributed.records import RankFailure, RankReport, from_wire, to_wire


def test_a_report_survives_the_wire_as_json(make_rank: Callable[..., RankReport]) -> None:
    report = make_rank(1, 2)
    wire = json.loads(json.dumps(to_wire(report)))
    assert from_wire(wire) == report
    assert list(wire)[:5] == ["rank", "host", "torch", "seed", "python"]
    assert wire["fingerprints"]["torch_randperm"] == "ab" and wire["fingerprints"]["python"] is None


def test_an_unprobed_environment_and_a_failure(make_rank: Callable[..., RankReport]) -> None:
    unprobed = make_rank(0, 1, fingerprints=None)
    assert to_wire(unprobed)["fingerprints"] == {} and from_wire(to_wire(unprobed)) == unprobed
    broken = RankFailure(1, "node1", "2.13.0", 0, "3.11", "/x: no such env")
    assert to_wire(broken) == {
        "rank": 1,
        "host": "node1",
        "torch": "2.13.0",
        "seed": 0,
        "python": "3.11",
        "error": "/x: no such env",
    }
    assert from_wire(to_wire(broken)) == broken
