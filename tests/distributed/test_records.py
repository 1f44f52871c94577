"""A rank's summary and package list as the plain data that cross between ranks, and back: nothing lost,
failures kept apart, no package list or shard index in the summary."""

from __future__ import annotations

import json
from collections.abc import Callable

from envguard.distributed.records import (
    EnvDetail,
    LockSeen,
    RankFailure,
    RankReport,
    detail_from_wire,
    detail_to_wire,
    from_wire,
    to_wire,
)
from envguard.model import Fingerprints


def test_a_summary_survives_the_wire_as_json(make_rank: Callable[..., RankReport]) -> None:
    report = make_rank(1, 2, lock=LockSeen("/p/conda-lock.yml", "ab" * 32, "--lock"))
    wire = json.loads(json.dumps(to_wire(report)))
    assert from_wire(wire) == report
    assert list(wire)[:6] == ["rank", "host", "torch", "seed", "python", "local_rank"]
    assert wire["packages"] == 2 and wire["lock"]["how"] == "--lock"
    assert set(wire["shards"][0]) == {"epoch", "length", "order_sha256", "in_slice", "loader_delivers"}
    assert len(json.dumps(wire)) < 1000  # digests and counts, no package list, no shard indices


def test_no_lock_and_a_failure(make_rank: Callable[..., RankReport]) -> None:
    unlocked = make_rank(0, 1, local_rank=None)
    assert to_wire(unlocked)["lock"] is None and from_wire(to_wire(unlocked)) == unlocked
    broken = RankFailure(1, "node1", "2.13.0", 0, "3.11", 1, "/x: no such env")
    assert to_wire(broken) == {
        "rank": 1,
        "host": "node1",
        "torch": "2.13.0",
        "seed": 0,
        "python": "3.11",
        "local_rank": 1,
        "error": "/x: no such env",
    }
    assert from_wire(to_wire(broken)) == broken


def test_a_package_list_survives_the_wire() -> None:
    detail = EnvDetail(3, ("conda:numpy=1.26.4=py311_0",), Fingerprints(torch_randperm="ab"))
    wire = json.loads(json.dumps(detail_to_wire(detail)))
    assert detail_from_wire(wire) == detail and wire["fingerprints"]["python"] is None
    unprobed = EnvDetail(3, (), None)
    assert (
        detail_to_wire(unprobed)["fingerprints"] == {}
        and detail_from_wire(detail_to_wire(unprobed)) == unprobed
    )
