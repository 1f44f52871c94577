"""What `envguard watch` concludes (frozen): the advice with its expected gain, the diagnosis, and the result
its views render (the run and its diagnosis)."""

from __future__ import annotations

from dataclasses import dataclass

from envguard.findings import Finding
from envguard.watch.records import WatchRun


@dataclass(frozen=True, slots=True)
class Advice:
    """The one change watch recommends: the setting, its new value where it has one, why, and the gain."""

    setting: str  # num_workers | augmentation | storage
    value: int | None
    text: str
    expected_speedup: float | None  # batches/s after / before, 1.0 or more


@dataclass(frozen=True, slots=True)
class Diagnosis:
    verdict: str  # input-bound | not input-bound | too short to judge | no loader timing
    cause: str  # cpu | all-cores-busy | io | latency | in-main | "" when not input-bound
    headline: str
    data_wait_fraction: float | None
    batches_per_s: float | None
    findings: tuple[Finding, ...]
    recommendation: Advice | None


@dataclass(frozen=True, slots=True)
class WatchResult:
    run: WatchRun
    diagnosis: Diagnosis
