"""What one rank measures: its real DistributedSampler shards per epoch (and a DataLoader's), the samples
under --data, and the lock it follows (given, recorded in the environment, the project's, none)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from envguard.distributed.measure import DEFAULT_SAMPLES, dataset_size, lock_seen, shard_report
from envguard.prefix.lockref import remember


def test_shards_differ_between_epochs_and_the_loader_delivers_them() -> None:
    shards, indices = shard_report(1001, 0, 2, seed=0, epochs=2, loader=True)
    assert [s.epoch for s in shards] == [0, 1] and shards[0].length == len(indices[0]) == 501
    assert indices[0] != indices[1] and sorted(indices[0]) != sorted(indices[1])
    assert all(s.loader_delivers is True for s in shards)
    unloaded, _ = shard_report(10, 1, 2, seed=0, epochs=1, loader=False)
    assert all(s.loader_delivers is None for s in unloaded)


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
