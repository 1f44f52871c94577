"""The distributed check's views: the JSON body's shape (every rank's summary, each epoch's partition, what
crossed the wire), the table of ranks with alike ranks on one row, a failed rank shown with dashes."""

from __future__ import annotations

import json
from collections.abc import Callable

from envguard.distributed import render
from envguard.distributed.records import RankFailure, RankReport
from envguard.distributed.result import Wire
from envguard.distributed.verdicts import analyze
from envguard.output import render as present_as

WIRE = Wire("Slurm", "node0:25242 (first host of SLURM_JOB_NODELIST)", 1024, (0, 1), 30_720)


def test_json_body(make_rank: Callable[..., RankReport]) -> None:
    result = analyze([make_rank(0, 2), make_rank(1, 2)], wire=WIRE)
    document = json.loads(present_as(render.views(result), "json"))
    assert list(document) == [
        "schema_version",
        "rank",
        "world_size",
        "launcher",
        "rendezvous",
        "ranks",
        "shards",
        "findings",
        "wire",
    ]
    assert document["launcher"] == "Slurm" and document["rendezvous"].startswith("node0:25242")
    first = document["ranks"][0]
    assert list(first) == [
        "rank",
        "host",
        "torch",
        "seed",
        "python",
        "local_rank",
        "prefix",
        "env_sha256",
        "packages",
        "package_list_bytes",
        "system",
        "lock",
        "dataset_size",
        "shards",
    ]
    assert document["shards"][0]["partition"] is True and document["shards"][0]["padding"] == 1
    assert document["findings"][0] == {
        "category": "environment across ranks",
        "check": "2 ranks",
        "status": "PASS",
        "evidence": f"every rank has environment {'e' * 12} (2 packages)",
        "fix": "",
    }
    assert document["wire"] == {"summary_bytes": 1024, "detail_ranks": [0, 1], "detail_bytes": 30_720}
    assert json.loads(present_as(render.views(analyze([make_rank(0, 1)])), "json"))["wire"] is None


def test_human_view_groups_alike_ranks_and_dashes_a_failed_one(make_rank: Callable[..., RankReport]) -> None:
    broken = RankFailure(2, "node2", "2.13.0", 0, "3.11", 0, "/x: no such env")
    ranks = [make_rank(0, 3, host="node0"), make_rank(1, 3, host="node0"), broken]
    text = render.human(analyze(ranks, wire=WIRE), "smoke --distributed")
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert rows[0].startswith("│ 0-1   │ node0") and "eeeeeeeeeeee" in rows[0]
    assert rows[1].startswith("│ 2     │ node2") and rows[1].count("│ -") == 3
    assert "3 ranks via Slurm, rendezvous node0:25242" in text
    assert "summaries 1024 B per rank, package lists from ranks 0-1 (30 KiB)" in text
    assert text.rstrip().endswith("smoke --distributed: FAIL (1 FAIL)")
    assert "schema_version" not in render.to_dict(analyze([broken]))


def test_the_wire_line_without_package_lists() -> None:
    quiet = Wire("torchrun", "h:1 (MASTER_ADDR, MASTER_PORT)", 600, (), 0)
    assert render.wire_line(quiet, 64) == (
        "64 ranks via torchrun, rendezvous h:1 (MASTER_ADDR, MASTER_PORT); summaries 600 B per rank, "
        "no package list"
    )
