"""What one rank measures: its real DistributedSampler shards per epoch (and a DataLoader's), the samples
under --data."""

from __future__ import annotations

from pathlib import Path

from envguard.distributed.measure import DEFAULT_SAMPLES, dataset_size, shard_report


def test_shards_differ_between_epochs_and_the_loader_delivers_them() -> None:
    shards = shard_report(1001, 0, 2, seed=0, epochs=2, loader=True)
    assert [s.epoch for s in shards] == [0, 1] and len(shards[0].indices) == 501
    assert shards[0].sha256 != shards[1].sha256
    assert all(s.loader_sha256 == s.sha256 for s in shards)
    assert all(s.loader_sha256 is None for s in shard_report(10, 1, 2, seed=0, epochs=1, loader=False))


def test_dataset_size_counts_the_files_under_data(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    for name in ("1.bin", "2.bin", "a/3.bin"):
        (tmp_path / name).write_bytes(b"x")
    assert dataset_size(tmp_path) == 3
    assert dataset_size(None) == DEFAULT_SAMPLES
