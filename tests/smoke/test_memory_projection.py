"""Issue 10, per-worker memory: copy-on-read judged on each worker's USS with PSS beside it, the node
projection with the shared pages counted once (PSS), and /dev/shm against the batches in flight of every
worker of every local rank. Real fork workers, real /proc/PID/smaps_rollup, the real /dev/shm."""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest

from envguard.machine.host import memory_info, shm_info
from envguard.smoke import memory_verdicts, runner
from tests.helpers import REPO

PLANTED = REPO / "tests" / "pipeline_planted.py"
sys.path.insert(0, str(runner.PACKAGE_PARENT))  # the in-environment package, as the module imports itself
from envguard_smoke import worker_memory  # noqa: E402

sys.path.insert(0, str(PLANTED.parent))
import pipeline_planted as planted  # noqa: E402


def measured(name: str, indices: int = 16384, **kwargs: Any) -> dict[str, Any]:
    return worker_memory.measure(
        getattr(planted, name)(**kwargs),
        workers=2,
        indices=indices,
        batch_size=256,
        seed=0,
        deadline=time.perf_counter() + 30,
    )


def test_copy_on_read_projection_counts_shared_pages_once_by_pss() -> None:
    record = measured("PathList")
    (finding,) = memory_verdicts.worker_memory(record, memory_info().available, workers=8, ranks=8)
    assert finding.status == "WARN", finding
    assert ", PSS " in finding.evidence and "shared, counted once by PSS" in finding.evidence, finding
    assert "8 local ranks x (parent " in finding.evidence and "8 workers x " in finding.evidence
    assert record["parent_end"]["pss"] >= record["parent_end"]["uss"] > 0


@pytest.mark.parametrize("name", ["PathArray", "MappedRows"])
def test_flat_twins_pass_with_the_node_projection(name: str) -> None:
    """A numpy array and a memory-mapped file (clean page-cache pages) are not copy-on-read."""
    (finding,) = memory_verdicts.worker_memory(measured(name), memory_info().available, workers=8, ranks=8)
    assert finding.status == "PASS", finding
    assert "no copy-on-read growth; node: 8 local ranks x" in finding.evidence, finding


def test_node_that_cannot_hold_every_rank_warns_even_without_growth() -> None:
    record = measured("PathArray")
    (finding,) = memory_verdicts.worker_memory(record, 2**30, workers=8, ranks=64)
    assert finding.status == "WARN" and "but the node needs 64 local ranks" in finding.evidence, finding


def test_dev_shm_is_judged_for_every_local_rank() -> None:
    record = measured("Frames", indices=64, count=64)
    assert record["sample_bytes"] == 3 * 224 * 224 * 4
    shm = shm_info()
    if not shm.exists or shm.free <= 0:
        pytest.skip("no /dev/shm here")
    per_rank = 8 * 2 * 32 * record["sample_bytes"]
    crowded = shm.free // per_rank + 1
    (full,) = memory_verdicts.shm_in_flight(record, shm, workers=8, ranks=crowded, batch_size=32, prefetch=2)
    assert full.status == "FAIL" and f"{crowded} local ranks x 8 workers x prefetch_factor 2" in full.evidence
    assert "--shm-size" in full.fix
    (one,) = memory_verdicts.shm_in_flight(record, shm, workers=8, ranks=1, batch_size=32, prefetch=2)
    assert one.status in ("PASS", "WARN") and "1 local ranks" in one.evidence
    if per_rank * 2 <= shm.free:
        assert one.status == "PASS", one


def test_a_collection_in_the_worker_is_not_the_datasets_copy_on_read() -> None:
    """The host process's own heap (a test runner's, a notebook's) is not the dataset's: a cyclic collection
    in a worker writes to every container the parent holds and copies those pages, which looked like
    copy-on-read of a numpy-array dataset (a false WARN in CI). The twin collects every few hundred reads."""
    ballast = [{"i": i} for i in range(1_500_000)]  # ~300 MiB of tracked containers in the parent
    try:
        (finding,) = memory_verdicts.worker_memory(
            measured("CollectingArray"), memory_info().available, workers=8, ranks=8
        )
    finally:
        del ballast
    assert finding.status == "PASS", finding
