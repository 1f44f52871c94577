"""verdicts/memory.py: copy-on-read judged on each worker's USS with PSS beside it, the node projection with
the shared pages counted once (PSS), and /dev/shm against the batches in flight (the sweep's, and those of
every worker of every local rank). Real fork workers, real /proc/PID/smaps_rollup, the real /dev/shm."""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from envguard_smoke import worker_memory

from envguard.machine.host import CpuInfo, ShmInfo, memory_info, shm_info
from envguard.smoke import verdicts
from envguard.smoke.measured_pipeline import WorkerMemory
from envguard.smoke.report import DatasetResult, Recommendation, SmokeOptions, SweepRow
from envguard.smoke.verdicts import memory
from tests.helpers import smoke_wire

GIB = 1 << 30


def measured(planted: ModuleType, name: str, indices: int = 16384, **kwargs: Any) -> dict[str, Any]:
    return worker_memory.measure(
        getattr(planted, name)(**kwargs),
        workers=2,
        indices=indices,
        batch_size=256,
        seed=0,
        deadline=time.perf_counter() + 30,
    )


def read(record: dict[str, Any]) -> WorkerMemory | None:
    """The record as run_smoke reads it (the module's JSON through wire)."""
    return smoke_wire({"memory": record}, "test").memory


def test_large_python_list_warns_with_a_projection(planted: ModuleType) -> None:
    record = measured(planted, "PathList")
    (finding,) = memory.worker_memory(read(record), memory_info().available, workers=8, ranks=8)
    assert finding.status == "WARN", finding
    assert "8 workers x 8 local ranks" in finding.evidence and "GiB available" in finding.evidence
    assert "dataset.samples (list of 400,000 str)" in finding.evidence and "numpy array" in finding.fix
    assert ", PSS " in finding.evidence and "shared, counted once by PSS" in finding.evidence, finding
    assert "8 local ranks x (parent " in finding.evidence and "8 workers x " in finding.evidence
    assert len(record["start"]) == 2 and record["indices"] > 8192
    assert record["parent_end"]["pss"] >= record["parent_end"]["uss"] > 0


@pytest.mark.parametrize("name", ["PathArray", "MappedRows"])
def test_flat_twins_pass_with_the_node_projection(planted: ModuleType, name: str) -> None:
    """A numpy array and a memory-mapped file (clean page-cache pages) are not copy-on-read."""
    record = measured(planted, name)
    (finding,) = memory.worker_memory(read(record), memory_info().available, workers=8, ranks=8)
    assert finding.status == "PASS", finding
    assert "no copy-on-read growth; node: 8 local ranks x" in finding.evidence, finding
    assert name == "MappedRows" or record["culprits"] == []


def test_node_that_cannot_hold_every_rank_warns_even_without_growth(planted: ModuleType) -> None:
    (finding,) = memory.worker_memory(read(measured(planted, "PathArray")), 2**30, workers=8, ranks=64)
    assert finding.status == "WARN" and "but the node needs 64 local ranks" in finding.evidence, finding


def test_unreadable_or_too_few_reads_are_not_judged() -> None:
    usage = {"uss": 100 * 2**20, "pss": 120 * 2**20}
    record = {
        "workers": 2,
        "indices": 64,
        "length": 64,
        "parent": usage,
        "culprits": [],
        "sample_bytes": 1024,
        "start": {"11": usage, "12": None},
        "parent_start": usage,
        "start_after": 16,
        "end": {"11": usage, "12": None},
        "parent_end": usage,
    }
    (few,) = memory.worker_memory(read(record), 2**34, workers=2, ranks=1)
    assert few.status == "INFO" and "too few samples" in few.evidence
    (unread,) = memory.worker_memory(read(dict(record, end={"11": None, "12": None})), 2**34, 2, 1)
    assert unread.status == "INFO" and "could not be read" in unread.evidence
    assert memory.worker_memory(None, 2**34, 2, 1) == []


def test_dev_shm_is_judged_for_every_local_rank(planted: ModuleType) -> None:
    record = measured(planted, "Frames", indices=64, count=64)
    assert record["sample_bytes"] == 3 * 224 * 224 * 4
    shm = shm_info()
    if not shm.exists or shm.free <= 0:
        pytest.skip("no /dev/shm here")
    per_rank = 8 * 2 * 32 * record["sample_bytes"]
    crowded = shm.free // per_rank + 1
    (full,) = memory.shm_in_flight(read(record), shm, workers=8, ranks=crowded, batch_size=32, prefetch=2)
    assert full.status == "FAIL" and f"{crowded} local ranks x 8 workers x prefetch_factor 2" in full.evidence
    assert "--shm-size" in full.fix
    (one,) = memory.shm_in_flight(read(record), shm, workers=8, ranks=1, batch_size=32, prefetch=2)
    assert one.status in ("PASS", "WARN") and "1 local rank x" in one.evidence
    if per_rank * 2 <= shm.free:
        assert one.status == "PASS", one


def test_a_collection_in_the_worker_is_not_the_datasets_copy_on_read(planted: ModuleType) -> None:
    """The host process's own heap (a test runner's, a notebook's) is not the dataset's: a cyclic collection
    in a worker writes to every container the parent holds and copies those pages, which looked like
    copy-on-read of a numpy-array dataset (a false WARN in CI). The twin collects every few hundred reads."""
    ballast = [{"i": i} for i in range(1_500_000)]  # ~300 MiB of tracked containers in the parent
    try:
        record = measured(planted, "CollectingArray")
    finally:
        del ballast
    (finding,) = memory.worker_memory(read(record), memory_info().available, workers=8, ranks=8)
    assert finding.status == "PASS", finding


def test_an_iterable_dataset_has_no_memory_record(planted: ModuleType) -> None:
    built = planted.iterable_loader()
    assert (
        worker_memory.measure(built.dataset, workers=1, indices=64, batch_size=8, seed=0, deadline=0.0) == {}
    )


# -- /dev/shm for the sweep's batches in flight


def dataset_with_batch(batch_bytes: int) -> DatasetResult:
    row = SweepRow(
        workers=2, pin_memory=False, persistent_workers=False, samples_per_s=10.0, batch_bytes=batch_bytes
    )
    return DatasetResult(
        name="io", bound="io", latency_ms=10.0, cpu_ms=0.0, nominal=True, batch_bytes=batch_bytes, rows=(row,)
    )


def test_shm_too_small_for_the_batches_in_flight() -> None:
    small = ShmInfo(path="/dev/shm", exists=True, total=64 * 2**20, free=64 * 2**20)
    batch = 19 * 2**20  # 32 x 3x224x224 float32
    assert memory.shm(small, [dataset_with_batch(batch)], workers=2).status == "FAIL"
    assert memory.shm(small, [dataset_with_batch(batch)], workers=0).status == "PASS"
    assert memory.shm(small, [dataset_with_batch(10 * 2**20)], workers=2).status == "WARN"
    assert memory.shm(ShmInfo(path="/nope", exists=False), [], 2).status == "INFO"


def test_shm_unmeasured_batches_are_not_a_pass() -> None:
    """The twin of test_command's planted /dev/shm (its verdict once flaked PASS under load): when the budget
    ran out before any batch was measured, what /dev/shm must hold is unknown, so the verdict says so."""
    small = ShmInfo(path="/dev/shm", exists=True, total=2**20, free=2**20)
    unmeasured = dataset_with_batch(0)
    finding = memory.shm(small, [unmeasured], workers=2)
    assert finding.status == "INFO" and "no batch was measured" in finding.evidence
    assert "--budget" in finding.fix
    assert memory.shm(small, [unmeasured, dataset_with_batch(8 * 2**20)], workers=2).status == "FAIL"


def test_batches_in_flight_come_from_the_recommendation_or_your_num_workers() -> None:
    """Which num_workers the /dev/shm verdict judges: the most of any recommendation's and yours (a busy
    machine can recommend 0 workers; --num-workers 2 keeps the verdict about 2)."""

    def rec(workers: int) -> Recommendation:
        return Recommendation("io", workers, False, False, 10.0, 0.5, "measured")

    assert memory.workers_in_flight({"io": rec(2), "cpu": None}, None) == 2
    assert memory.workers_in_flight({"io": None}, None) == 0
    assert memory.workers_in_flight({"io": rec(0), "cpu": rec(0)}, None) == 0
    assert memory.workers_in_flight({"io": rec(0)}, 2) == 2


def test_shm_measured_with_statvfs(tmp_path: Path) -> None:
    info = shm_info(tmp_path)
    assert info.exists and 0 < info.free <= info.total
    assert memory.shm(info, [dataset_with_batch(info.free)], workers=1).status == "FAIL"


def test_your_loaders_workers_are_the_batches_in_flight_not_zero() -> None:
    """issue 27's minor item: `smoke --loader` on a loader with num_workers=2 (no sweep, no --num-workers)
    printed a second /dev/shm line saying "no batches cross it (num_workers=0)" beside the loader's own."""
    settings = {"num_workers": 2, "batch_size": 8, "prefetch_factor": 2, "collate_fn": "default_collate"}
    measured = smoke_wire({"loader": {"settings": settings, "limit": 32}}, "test")
    cpus = CpuInfo(logical=2, affinity=2, physical=2, quota=None, usable=2)
    shm = ShmInfo(path="/dev/shm", exists=True, total=GIB, free=GIB)
    facts = verdicts.HostFacts(cpus=cpus, shm=shm, available=16 * GIB)
    found = verdicts.judge(
        verdicts.Inputs(measured, SmokeOptions(loader="train.py:make_loader"), (), {}, facts)
    )
    shm_lines = [f for f in found if "/dev/shm" in f.check]
    assert not any("num_workers=0" in f.evidence for f in shm_lines), shm_lines
