"""The distributed verdicts over hand-built rank reports: shards that partition the dataset (padding
counted), dataset sizes, seeds, DataLoaders, environments and systems across ranks, a failed rank."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from envguard.distributed.records import EpochShard, RankFailure, RankReport
from envguard.distributed.result import DistributedResult
from envguard.distributed.verdicts import CATEGORY_SHARDS, analyze
from envguard.model import Fingerprints


def statuses(result: DistributedResult) -> dict[str, str]:
    return {f"{f.category}: {f.check}": f.status for f in result.findings}


def test_shards_partition_with_padding_counted(make_rank: Callable[..., RankReport]) -> None:
    result = analyze([make_rank(1, 2), make_rank(0, 2)])
    assert set(statuses(result).values()) == {"PASS"}
    check = result.shards[0]
    assert check.padding == 1 and check.repeated == 1 and check.missing == 0 and check.partition
    assert check.shard_sizes == (501, 501)
    assert [r.rank for r in result.ranks] == [0, 1]


def test_different_dataset_sizes_fail(make_rank: Callable[..., RankReport]) -> None:
    found = analyze([make_rank(0, 2, size=1001), make_rank(1, 2, size=998)]).findings
    assert found[-1].status == "FAIL" and "rank 0: 1001, rank 1: 998" in found[-1].evidence


def test_different_seeds_fail(make_rank: Callable[..., RankReport]) -> None:
    found = analyze([make_rank(0, 2, seed=0), make_rank(1, 2, seed=1)]).findings
    assert any(f.check == "sampler seed" and f.status == "FAIL" for f in found)


def test_shards_that_do_not_partition_fail(make_rank: Callable[..., RankReport]) -> None:
    wrong = make_rank(1, 2, shards=make_rank(0, 2).shards)  # rank 1 built its sampler with rank=0
    found = [f for f in analyze([make_rank(0, 2), wrong]).findings if f.category == CATEGORY_SHARDS]
    assert found and all(f.status == "FAIL" for f in found) and "500 missing" in found[0].evidence


def test_a_loader_that_does_not_deliver_its_samplers_shard_fails(
    make_rank: Callable[..., RankReport],
) -> None:
    first, second = make_rank(1, 2).shards
    shuffled = (first, dataclasses.replace(second, loader_sha256="0" * 64))
    found = {f.check: f for f in analyze([make_rank(0, 2), make_rank(1, 2, shards=shuffled)]).findings}
    assert found["rank 1 DataLoader"].status == "FAIL" and "epochs [1]" in found["rank 1 DataLoader"].evidence
    unmeasured = tuple(EpochShard(s.epoch, s.indices, s.sha256) for s in make_rank(1, 2).shards)
    assert "rank 1 DataLoader" not in {
        f.check for f in analyze([make_rank(0, 2), make_rank(1, 2, shards=unmeasured)]).findings
    }


def test_environment_and_system_differences(make_rank: Callable[..., RankReport]) -> None:
    other = make_rank(
        1,
        2,
        env_sha256="f" * 64,
        packages=("conda:numpy=2.0.1=py311_0", "conda:python=3.11.9=h0_0"),
        fingerprints=Fingerprints(torch_randperm="cd"),
        system=("__cuda=11.8", "__glibc=2.36"),
    )
    found = {f.check: f for f in analyze([make_rank(0, 2), other]).findings}
    env = found["rank 1 on node1"]
    assert env.status == "FAIL" and "conda:numpy 1.26.4=py311_0 -> 2.0.1=py311_0" in env.evidence
    assert "torch_randperm" in env.evidence
    system = found["rank 1 on node1 (system)"]
    assert system.status == "WARN" and "__cuda=11.8" in system.evidence


def test_an_unprobed_rank_differs_in_every_probed_stream(make_rank: Callable[..., RankReport]) -> None:
    found = {
        f.check: f
        for f in analyze([make_rank(0, 2), make_rank(1, 2, env_sha256="f" * 64, fingerprints=None)]).findings
    }
    assert "streams differ: torch_randperm" in found["rank 1 on node1"].evidence


def test_a_failing_rank_is_reported_not_hung(make_rank: Callable[..., RankReport]) -> None:
    broken = RankFailure(1, "node1", "2.13.0", 0, "3.11", "/x: no such env")
    result = analyze([make_rank(0, 2), broken])
    assert [f.status for f in result.findings] == ["FAIL"] and "/x: no such env" in result.findings[
        0
    ].evidence
    assert result.shards == ()
