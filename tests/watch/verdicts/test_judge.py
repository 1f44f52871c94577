"""The whole diagnosis: the input pipeline's finding first, then memory's, the GPU's and the hook's; from a
run, through its summary."""

from __future__ import annotations

from envguard.watch.records import HookStatus
from envguard.watch.verdicts import diagnose, judge, watch_result
from tests.watch.helpers import figures, loader, proc, run, sample, summary


def test_findings_in_concern_order() -> None:
    found = judge(
        summary(
            loader(100, 6.0, 4.0, workers=0),
            figures=figures(workers=0, shm_peak=0.95),
            hook=HookStatus("active", ("pid 10: boom",)),
        )
    )
    assert [f.category for f in found.findings] == ["input pipeline", "memory", "memory", "GPU", "hook"]
    assert found.cause == "in-main" and found.recommendation is not None


def test_a_run_is_diagnosed_through_its_summary() -> None:
    samples = tuple(
        sample(
            float(t),
            (proc(10, 1, "main", 40.0), proc(11, 10, "worker", 5.0)),
            (loader(t * 25, t * 1.5, t * 1.0),),
        )
        for t in range(1, 5)
    )
    watched = run(samples)
    result = watch_result(watched)
    assert result.run is watched and result.diagnosis == diagnose(watched)
    assert result.diagnosis.verdict == "input-bound" and result.diagnosis.data_wait_fraction == 0.6
