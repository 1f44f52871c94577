"""What one rank measures: its real DistributedSampler shards per epoch (and a DataLoader's), the samples
under --data, and the lock it follows (given, recorded in the environment, the project's, none)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from envguard.distributed.measure import DEFAULT_SAMPLES, dataset_size, lock_seen, shard_report, slice_of
from envguard.prefix.lockref import remember


def test_each_rank_holds_its_slice_of_one_order_per_epoch() -> None:
    first = shard_report(1001, 0, 2, seed=0, epochs=2, loader=True)
    second = shard_report(1001, 1, 2, seed=0, epochs=2, loader=True)
    assert [s.epoch for s in first] == [0, 1] and first[0].length == second[0].length == 501
    assert first[0].order_sha256 == second[0].order_sha256 != first[1].order_sha256  # reshuffled per epoch
    assert all(s.in_slice and s.loader_delivers is True for s in first + second)
    assert shard_report(1001, 0, 2, seed=1, epochs=1, loader=False)[0].order_sha256 != first[0].order_sha256
    unloaded = shard_report(10, 1, 2, seed=0, epochs=1, loader=False)
    assert all(s.loader_delivers is None for s in unloaded)
    assert shard_report(0, 0, 2, seed=0, epochs=1, loader=False)[0].length == 0


def test_slices_repeat_the_orders_head_as_padding() -> None:
    order = [4, 0, 3, 1, 2]
    assert [slice_of(order, r, 2) for r in range(2)] == [(4, 3, 2), (0, 1, 4)]  # 4 repeated: padding 1
    assert [slice_of(order[:2], r, 5) for r in range(5)] == [(4,), (0,), (4,), (0,), (4,)]
    assert slice_of([], 0, 3) == ()


def test_dataset_size_counts_the_files_under_data(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    for name in ("1.bin", "2.bin", "a/3.bin"):
        (tmp_path / name).write_bytes(b"x")
    assert dataset_size(tmp_path) == 3
    assert dataset_size(None) == DEFAULT_SAMPLES


def test_the_lock_a_rank_follows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, project = tmp_path / "env", tmp_path / "project"
    (prefix / "conda-meta").mkdir(parents=True)
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    assert lock_seen(None, prefix) is None
    found = project / "conda-lock.yml"
    found.write_text("project lock\n")
    seen = lock_seen(None, prefix)
    assert seen is not None and (seen.path, seen.how) == (str(found.resolve()), "project")
    assert seen.sha256 == hashlib.sha256(b"project lock\n").hexdigest()
    recorded = tmp_path / "made-from.yml"
    recorded.write_text("recorded lock\n")
    assert remember(prefix, recorded)
    seen = lock_seen(None, prefix)
    assert seen is not None and (seen.path, seen.how) == (str(recorded.resolve()), "recorded")
    recorded.unlink()  # recorded, but gone from this node
    seen = lock_seen(None, prefix)
    assert seen is not None and seen.sha256 == "" and seen.how == "recorded"
    given = lock_seen(Path("conda-lock.yml"), prefix)
    assert given is not None and (given.path, given.how) == (str(found.resolve()), "--lock")


def test_a_rank_out_of_memory_is_reported_not_raised(make_prefix, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under `smoke --distributed --memory-limit`, a rank whose DataLoader's allocation is refused reports
    that it could not measure (every rank then judges it), instead of dying and leaving the others waiting."""
    from envguard.distributed import measure
    from envguard.distributed.records import RankFailure

    def refused(*_args: object, **_kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(measure, "shard_report", refused)
    prefix = make_prefix(["python=3.11"])
    result = measure.rank_report(str(prefix), 0, 1, seed=0, epochs=1, probe=False, loader=True)
    assert isinstance(result.report, RankFailure) and result.report.error == measure.OUT_OF_MEMORY
    assert "--memory-limit" in result.report.error and result.detail == b""
