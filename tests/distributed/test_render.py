"""The distributed check's views: the JSON body's shape (ranks without packages or shard indices, each
epoch's partition), the table of ranks, a failed rank shown with dashes."""

from __future__ import annotations

import json
from collections.abc import Callable

from envguard.distributed import render
from envguard.distributed.records import RankFailure, RankReport
from envguard.distributed.verdicts import analyze
from envguard.output import render as present_as


def test_json_body(make_rank: Callable[..., RankReport]) -> None:
    result = analyze([make_rank(0, 2), make_rank(1, 2)])
    document = json.loads(present_as(render.views(result), "json"))
    assert list(document) == ["schema_version", "rank", "world_size", "ranks", "shards", "findings"]
    first = document["ranks"][0]
    assert list(first) == [
        "rank",
        "host",
        "torch",
        "seed",
        "python",
        "prefix",
        "fingerprints",
        "system",
        "env_sha256",
        "dataset_size",
    ]
    assert document["shards"][0]["partition"] is True and document["shards"][0]["padding"] == 1
    assert document["findings"][0] == {
        "category": "environment across ranks",
        "check": "2 ranks",
        "status": "PASS",
        "evidence": f"every rank has environment {'e' * 12} (2 packages)",
        "fix": "",
    }


def test_human_view_with_a_failed_rank(make_rank: Callable[..., RankReport]) -> None:
    broken = RankFailure(1, "node1", "2.13.0", 0, "3.11", "/x: no such env")
    text = render.human(analyze([make_rank(0, 2), broken]), "smoke --distributed")
    row = next(line for line in text.splitlines() if "node1" in line and "│ 1" in line)
    assert row.count("│ -") == 3
    assert text.rstrip().endswith("smoke --distributed: FAIL (1 FAIL)")
    assert "schema_version" not in render.to_dict(analyze([broken]))
