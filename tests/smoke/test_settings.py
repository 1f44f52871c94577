"""settings.py: the worker counts to sweep and the JSON settings the in-environment module reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from envguard.cli.commands.smoke import _memory_limit
from envguard.errors import BadInputError, UsageError
from envguard.machine.host import CpuInfo, MemoryInfo
from envguard.model import Fingerprints
from envguard.smoke.recordfile import Recording
from envguard.smoke.report import SmokeOptions
from envguard.smoke.settings import memory_limit, settings, worker_counts


def cpus(usable: int, physical: int) -> CpuInfo:
    return CpuInfo(logical=usable, affinity=usable, physical=physical, quota=None, usable=usable)


def test_default_worker_counts() -> None:
    assert worker_counts(SmokeOptions(), cpus(2, 2)) == [0, 1, 2]
    assert worker_counts(SmokeOptions(), cpus(16, 8)) == [0, 1, 2, 4, 8, 15, 16]
    assert worker_counts(SmokeOptions(workers=(0, 4), num_workers=3), cpus(16, 8)) == [0, 3, 4]


def test_the_synthetic_run_reads_no_user_pipeline() -> None:
    config = settings(SmokeOptions(num_workers=3), [0, 2, 3, 4], 20.0, None, cpus_usable=4)
    assert config["synthetic"] and config["dataset"] is None and config["loader"] is None
    assert config["essential_workers"] == [0, 3, 4] and config["determinism"]["max_workers"] == 2
    assert config["crossproc"] is None and config["memory"] is None and config["record"] is None
    assert config["data_cold"] is False and config["refine"] is True


def test_a_comparison_replays_the_recordings_seed_and_batches(tmp_path: Path) -> None:
    recorded = Recording(tmp_path / "r.json", "user", 7, 16, 2, (), Fingerprints())
    options = SmokeOptions(seed=1234, batch_size=32, compare=tmp_path / "r.json")
    config = settings(options, [0, 2], 20.0, None, recorded=recorded)
    assert config["record"] == {"seed": 7, "batch_size": 16, "batches": 2}
    fresh = settings(SmokeOptions(seed=5, record=tmp_path / "new.json"), [0, 2], 20.0, None)
    assert fresh["record"] == {"seed": 5, "batch_size": 32, "batches": 4}


def test_user_files_are_absolute_and_checked(tmp_path: Path) -> None:
    module = tmp_path / "data.py"
    module.write_text("class Images: ...\n")
    config = settings(SmokeOptions(dataset=f"{module}:Images"), [0, 2], 20.0, None)
    assert config["dataset"] == f"{module.resolve()}:Images" and config["crossproc"] == {
        "seed": 1234,
        "limit": 32,
    }
    with pytest.raises(UsageError, match=r"expected path/to/module\.py:NAME"):
        settings(SmokeOptions(loader="data:make"), [0, 2], 20.0, None)
    with pytest.raises(BadInputError, match="no such file"):
        settings(SmokeOptions(dataset=f"{tmp_path / 'nope.py'}:X"), [0, 2], 20.0, None)


GIB = 1 << 30


def test_the_memory_limit_is_the_option_or_three_quarters_of_the_memory_available() -> None:
    """Issue 28: smoke's processes run under a limit derived from the machine unless --memory-limit says."""
    roomy = MemoryInfo(total=64 * GIB, available=40 * GIB, cgroup_limit=None)
    assert memory_limit(SmokeOptions(), roomy) == 30 * GIB
    boxed = MemoryInfo(total=64 * GIB, available=40 * GIB, cgroup_limit=8 * GIB)
    assert memory_limit(SmokeOptions(), boxed) == 6 * GIB  # the cgroup's limit is the smaller
    small = MemoryInfo(total=2 * GIB, available=GIB, cgroup_limit=None)
    assert memory_limit(SmokeOptions(), small) == 2 * GIB  # the floor: the module and torch need room
    assert memory_limit(SmokeOptions(), MemoryInfo(total=None, available=None, cgroup_limit=None)) is None
    assert memory_limit(SmokeOptions(memory_limit=GIB), roomy) == GIB
    assert memory_limit(SmokeOptions(memory_limit=0), roomy) is None  # --memory-limit none
    sent = settings(SmokeOptions(), [0], 5.0, None, memory_limit=3 * GIB)
    assert sent["memory_limit"] == 3 * GIB


def test_memory_limit_sizes() -> None:
    assert [_memory_limit(t) for t in ("8G", "512m", "1.5GiB", "2g", "none", "NONE")] == [
        8 * GIB,
        512 << 20,
        3 * GIB // 2,
        2 * GIB,
        0,
        0,
    ]
    for bad in ("lots", "", "-1G", "100M", "inf", "8X"):
        with pytest.raises(UsageError, match=f"--memory-limit {bad}: expected a size"):
            _memory_limit(bad)
