"""settings.py: the worker counts to sweep and the JSON settings the in-environment module reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from envguard.errors import BadInputError, UsageError
from envguard.machine.host import CpuInfo
from envguard.model import Fingerprints
from envguard.smoke.recordfile import Recording
from envguard.smoke.report import SmokeOptions
from envguard.smoke.settings import settings, worker_counts


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
