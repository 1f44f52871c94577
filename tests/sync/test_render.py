"""sync's human view (pure): the plan and the drift left after it, at 80 columns: no line longer, nothing
cut short with `…`."""

from __future__ import annotations

import pytest

from envguard.check import CheckReport
from envguard.diff.changes import Difference
from envguard.model import Package
from envguard.sync.plan import Step, SyncPlan
from envguard.sync.render import human, plan_text
from envguard.sync.run import SyncResult

CHANNEL = "file:///home/someone/projects/a-rather-long-project-name/channels/pytorch-nightly-mirror"
PREFIX = "/home/someone/miniforge3/envs/a-rather-long-project-name-training-environment"
LOCK = "/home/someone/projects/a-rather-long-project-name/environments/training/conda-lock.yml"


def _plan() -> SyncPlan:
    cpu = Package("conda", "pytorch", "2.1.0", "py3.11_cpu_0", channel=CHANNEL)
    cuda = Package("conda", "pytorch", "2.1.0", "py3.11_cuda11.8_cudnn8.7.0_0", channel=CHANNEL)
    six = Package("conda", "six", "1.16.0", "pyh6c4a22f_0", channel=CHANNEL + "-forge")
    return SyncPlan(
        PREFIX,
        LOCK,
        "linux-64",
        "prefix",
        (Step("conda", "replace", "pytorch", cpu, cuda), Step("conda", "link", "six", None, six)),
    )


def _fits(text: str, columns: int) -> None:
    long = [line for line in text.splitlines() if len(line) > columns]
    assert not long, "\n".join(long)
    assert "…" not in text


@pytest.mark.parametrize("columns", [80, 100])
def test_the_plan_fits_without_cutting(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    text = plan_text(_plan())
    _fits(text, columns)
    flat = "".join(text.split())
    for word in (CHANNEL, PREFIX, LOCK, "py3.11_cuda11.8_cudnn8.7.0_0", "pyh6c4a22f_0"):
        assert word in flat, word


def test_drift_left_after_a_sync_wraps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    left = Difference(
        "conda",
        "changed",
        "pytorch",
        text=f"pytorch 2.1.0 ({CHANNEL}): py3.11_cuda11.8_cudnn8.7.0_0 in the lock → py3.11_cpu_0 installed",
    )
    result = SyncResult(_plan(), backend="embedded", applied=True, after=CheckReport(LOCK, PREFIX, (left,)))
    text = human(result)
    _fits(text, 80)
    assert "DRIFT after sync" in text and "py3.11_cpu_0 installed" in " ".join(text.split())
