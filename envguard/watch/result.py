"""What `envguard watch` concludes (frozen): the advice with its expected gain, the diagnosis, and the result
its views render (the run and its diagnosis)."""

from __future__ import annotations

from dataclasses import dataclass

from envguard.findings import Finding
from envguard.pipeline import Pipeline
from envguard.watch.records import WatchRun


@dataclass(frozen=True, slots=True)
class Change:
    """The one change watch recommends: the setting, its new value where it has one, why, and the gain."""

    setting: str  # num_workers | threads | augmentation | storage | keep
    value: int | None
    text: str
    expected_speedup: float | None  # batches/s after / before, as the input-pipeline model predicts it
    rule: str = (
        ""  # the rule that produced it: the model's (in-main, overlap-waits, spare-cores, ...) or disk
    )
    dataloader: str = ""  # the whole setting: DataLoader(num_workers=..., prefetch_factor=..., ...)
    predicted_batches_per_s: float | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Diagnosis:
    verdict: str  # input-bound | not input-bound | too short to judge | no loader timing
    cause: str  # cpu | all-cores-busy | io | latency | in-main | "" when not input-bound
    headline: str
    data_wait_fraction: float | None
    batches_per_s: float | None
    findings: tuple[Finding, ...]
    recommendation: Change | None
    pipeline: Pipeline | None = None  # the costs the input-pipeline model judged


@dataclass(frozen=True, slots=True)
class WatchResult:
    run: WatchRun
    diagnosis: Diagnosis
