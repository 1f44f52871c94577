"""The distributed verdicts over hand-built summaries: shards that partition the dataset (padding counted),
dataset sizes, seeds, DataLoaders; environments, systems and locks against the majority's, alike ranks
grouped into one finding; which ranks send rank 0 their package list; a failed rank."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from envguard.distributed.records import EnvDetail, EpochShard, LockSeen, RankFailure, RankReport
from envguard.distributed.result import DistributedResult
from envguard.distributed.verdicts import (
    CATEGORY_AGAINST,
    CATEGORY_ENV,
    CATEGORY_LOCK,
    CATEGORY_SHARDS,
    MAX_DETAILED,
    analyze,
    detail_senders,
    spans,
)
from envguard.model import Fingerprints

MakeRank = Callable[..., RankReport]
NUMPY_1 = ("conda:numpy=1.26.4=py311_0", "conda:python=3.11.9=h0_0")
NUMPY_2 = ("conda:numpy=2.0.1=py311_0", "conda:python=3.11.9=h0_0")


def statuses(result: DistributedResult) -> dict[str, str]:
    return {f"{f.category}: {f.check}": f.status for f in result.findings}


def test_shards_partition_with_padding_counted(make_rank: MakeRank) -> None:
    result = analyze([make_rank(1, 2), make_rank(0, 2)])
    assert set(statuses(result).values()) == {"PASS"}
    check = result.shards[0]
    assert check.padding == 1 and check.orders == 1 and check.off_slice == () and check.partition
    assert check.shard_sizes == (501, 501)
    assert [r.rank for r in result.ranks] == [0, 1]
    assert result.findings[-1].evidence == (
        "2 shards of 501 over 1001 samples in one shuffled order partition them (padding 1)"
    )


def test_different_dataset_sizes_fail(make_rank: MakeRank) -> None:
    found = analyze([make_rank(0, 2, size=1001), make_rank(1, 2, size=998)]).findings
    assert found[-1].status == "FAIL" and "rank 0: 1001, rank 1: 998" in found[-1].evidence
    many = [make_rank(r, 8, size=10 if r < 6 else 12) for r in range(8)]
    assert "ranks 0-5: 10, ranks 6-7: 12" in analyze(many).findings[-1].evidence


def test_different_seeds_fail(make_rank: MakeRank) -> None:
    found = analyze([make_rank(0, 2, seed=0), make_rank(1, 2, seed=1)]).findings
    assert any(f.check == "sampler seed" and f.status == "FAIL" for f in found)


def test_ranks_that_shuffle_into_another_order_fail(make_rank: MakeRank) -> None:
    other_order = make_rank(0, 4, seed=7).shards  # what another torch's randperm would give: another order
    ranks = [make_rank(r, 4) for r in range(3)]
    ranks.append(make_rank(3, 4, shards=tuple(dataclasses.replace(s, in_slice=True) for s in other_order)))
    result = analyze(ranks)
    found = [f for f in result.findings if f.category == CATEGORY_SHARDS]
    assert [f.status for f in found] == ["FAIL", "FAIL"] and result.shards[0].orders == 2
    assert "rank 3 shuffled it into another order than ranks 0-2 (2 orders)" in found[0].evidence
    assert "torch build" in found[0].fix


def test_a_rank_off_its_slice_fails(make_rank: MakeRank) -> None:
    wrong = tuple(dataclasses.replace(s, in_slice=False) for s in make_rank(1, 2).shards)
    result = analyze([make_rank(0, 2), make_rank(1, 2, shards=wrong)])
    found = [f for f in result.findings if f.category == CATEGORY_SHARDS]
    assert found and all(f.status == "FAIL" for f in found) and result.shards[0].off_slice == (1,)
    assert found[0].evidence.endswith("rank 1 did not get its slice of the shared order")


def test_a_loader_that_does_not_deliver_its_samplers_shard_fails(make_rank: MakeRank) -> None:
    first, second = make_rank(1, 2).shards
    shuffled = (first, dataclasses.replace(second, loader_delivers=False))
    found = {f.check: f for f in analyze([make_rank(0, 2), make_rank(1, 2, shards=shuffled)]).findings}
    assert found["rank 1 DataLoader"].status == "FAIL" and "epochs [1]" in found["rank 1 DataLoader"].evidence
    unmeasured = tuple(
        EpochShard(s.epoch, s.length, s.order_sha256, s.in_slice) for s in make_rank(1, 2).shards
    )
    assert "rank 1 DataLoader" not in {
        f.check for f in analyze([make_rank(0, 2), make_rank(1, 2, shards=unmeasured)]).findings
    }


def test_the_odd_rank_out_is_named_against_the_majority(make_rank: MakeRank) -> None:
    ranks = [make_rank(r, 4) for r in range(3)] + [make_rank(3, 4, env_sha256="f" * 64)]
    details = {
        0: EnvDetail(0, NUMPY_1, Fingerprints(torch_randperm="ab")),
        3: EnvDetail(3, NUMPY_2, Fingerprints(torch_randperm="cd")),
    }
    on_rank0 = analyze(ranks, 0, details=details)
    env = {f.check: f for f in on_rank0.findings}["rank 3 on node3"]
    assert env.status == "FAIL"
    assert "differs from rank 0 on node0's (3 of 4 ranks)" in env.evidence
    assert "conda:numpy 1.26.4=py311_0 -> 2.0.1=py311_0" in env.evidence
    assert "streams differ: torch_randperm" in env.evidence
    elsewhere = analyze(ranks, 2)  # no package lists on the other ranks: the same verdicts, fewer words
    assert statuses(elsewhere) == statuses(on_rank0)
    assert "ffffffffffff vs eeeeeeeeeeee (package lists not compared)" in elsewhere.findings[0].evidence


def test_two_ranks_that_differ_are_judged_against_rank_0(make_rank: MakeRank) -> None:
    other = make_rank(1, 2, env_sha256="f" * 64)
    details = {0: EnvDetail(0, NUMPY_1, None), 1: EnvDetail(1, NUMPY_2, None)}
    (env,) = [f for f in analyze([make_rank(0, 2), other], details=details).findings if f.status == "FAIL"]
    assert env.check == "rank 1 on node1" and "rank 0 on node0's (1 of 2 ranks)" in env.evidence


def test_a_node_of_alike_ranks_is_one_finding(make_rank: MakeRank) -> None:
    ranks = [
        make_rank(r, 16, host=f"node{r // 8}", env_sha256=("f" if 8 <= r < 16 and r != 12 else "e") * 64)
        for r in range(16)
    ]
    (env,) = [f for f in analyze(ranks).findings if f.status == "FAIL"]
    assert env.check == "ranks 8-11, 13-15 on node1"
    assert "(9 of 16 ranks)" in env.evidence


def test_system_differences_warn(make_rank: MakeRank) -> None:
    other = make_rank(1, 2, system=("__cuda=11.8", "__glibc=2.36"))
    found = {f.check: f for f in analyze([make_rank(0, 2), other]).findings}
    system = found["rank 1 on node1 (system)"]
    assert system.status == "WARN" and "__cuda=11.8" in system.evidence


def test_ranks_that_disagree_on_the_lock_are_named(make_rank: MakeRank) -> None:
    shared = LockSeen("/proj/conda-lock.yml", "a" * 64, "project")
    assert not [
        f for f in analyze([make_rank(0, 2), make_rank(1, 2)]).findings if f.category == CATEGORY_LOCK
    ]
    agreed = analyze(
        [make_rank(0, 2, lock=shared), make_rank(1, 2, lock=dataclasses.replace(shared, path="/b"))]
    )
    assert statuses(agreed)[f"{CATEGORY_LOCK}: 2 ranks"] == "PASS"  # the same bytes under another path
    ranks = [make_rank(r, 3, lock=shared) for r in range(2)]
    ranks.append(make_rank(2, 3, lock=LockSeen("/old/conda-lock.yml", "b" * 64, "recorded")))
    (lock,) = [f for f in analyze(ranks).findings if f.category == CATEGORY_LOCK]
    assert lock.status == "FAIL" and lock.check == "rank 2 on node2"
    assert "/old/conda-lock.yml (recorded, bbbbbbbbbbbb)" in lock.evidence
    assert "/proj/conda-lock.yml (project, aaaaaaaaaaaa)" in lock.evidence and "--lock" in lock.fix
    missing = analyze([make_rank(0, 2, lock=shared), make_rank(1, 2)])
    assert {f.status for f in missing.findings if f.category == CATEGORY_LOCK} == {"FAIL"}
    unreadable = analyze(
        [make_rank(0, 2, lock=shared), make_rank(1, 2, lock=dataclasses.replace(shared, sha256=""))]
    )
    (bad,) = [f for f in unreadable.findings if f.category == CATEGORY_LOCK]
    assert bad.check == "rank 1 on node1" and "unreadable there" in bad.evidence


def test_who_sends_rank_0_a_package_list(make_rank: MakeRank) -> None:
    alike = [make_rank(r, 4) for r in range(4)]
    assert detail_senders(alike) == ()
    odd = [make_rank(r, 4, env_sha256=("f" if r in (2, 3) else "e") * 64) for r in range(3)]
    odd.append(make_rank(3, 4, env_sha256="f" * 64))
    assert detail_senders(odd) == (0, 2)  # a tie: the group holding rank 0 is the reference
    every = [make_rank(r, 20, env_sha256=f"{r:064x}") for r in range(20)]
    assert detail_senders(every) == tuple(range(MAX_DETAILED + 1))
    broken = RankFailure(1, "node1", "2.13.0", 0, "3.11", 0, "bad")
    assert detail_senders([make_rank(0, 2), broken]) == ()


def test_failing_ranks_are_reported_grouped_not_hung(make_rank: MakeRank) -> None:
    broken = [RankFailure(r, f"node{r}", "2.13.0", 0, "3.11", 0, "/x: no such env") for r in (1, 2, 3)]
    result = analyze([make_rank(0, 4), *broken])
    (failure,) = result.findings
    assert failure.status == "FAIL" and failure.check == "ranks 1-3 on node1, node2, node3"
    assert failure.evidence == "/x: no such env" and result.shards == ()


def test_spans() -> None:
    assert spans([9, 0, 1, 2, 3, 12, 13, 5]) == "0-3, 5, 9, 12-13"
    assert spans([4]) == "4"


def test_ranks_that_agree_but_not_with_their_lock_fail(make_rank: MakeRank) -> None:
    """A cluster whose every rank drifted alike from the lock is stale, not good: one FAIL naming the ranks,
    the drift and the sync that fixes it on each host; ranks that match their lock pass."""
    lock = LockSeen("/proj/conda-lock.yml", "a" * 64, "--lock", drift=0)
    clean = analyze([make_rank(r, 2, lock=lock) for r in range(2)])
    assert statuses(clean)[f"{CATEGORY_AGAINST}: 2 ranks"] == "PASS"
    stale = dataclasses.replace(lock, drift=3, changes=("numpy: 1.26.4 in the lock, 2.0.1 here", "six: gone"))
    result = analyze([make_rank(r, 4, lock=stale) for r in range(4)])
    assert statuses(result)[f"{CATEGORY_ENV}: 4 ranks"] == "PASS"  # they agree with each other
    (against,) = [f for f in result.findings if f.category == CATEGORY_AGAINST]
    assert against.status == "FAIL" and against.check.startswith("ranks 0-3 on node0")
    assert "/proj/conda-lock.yml (3 differences): numpy: 1.26.4" in against.evidence
    assert "; and 1 more" in against.evidence
    assert "`envguard sync /env --lock /proj/conda-lock.yml`" in against.fix
    assert "`envguard create --lock /proj/conda-lock.yml -p /env --force`" in against.fix
    unread = dataclasses.replace(lock, drift=None, changes=("not a lock",))
    (bad,) = [
        f
        for f in analyze([make_rank(0, 2, lock=lock), make_rank(1, 2, lock=unread)]).findings
        if f.category == CATEGORY_AGAINST
    ]
    assert bad.status == "FAIL" and bad.check == "rank 1 on node1" and "not a lock" in bad.evidence


def test_an_environment_that_differs_is_fixed_by_a_command_that_runs(make_rank: MakeRank) -> None:
    lock = LockSeen("/proj/conda-lock.yml", "a" * 64, "--lock")
    ranks = [make_rank(0, 2, lock=lock), make_rank(1, 2, lock=lock, env_sha256="f" * 64)]
    (env,) = [f for f in analyze(ranks).findings if f.category == CATEGORY_ENV and f.status == "FAIL"]
    assert "envguard create LOCK" not in env.fix
    assert "`envguard sync /env --lock /proj/conda-lock.yml`" in env.fix
