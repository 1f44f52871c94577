"""What `envguard watch` concludes (frozen): the advice with its expected gain, the diagnosis, and the result
its views render (the run and its diagnosis)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from envguard.findings import Finding
from envguard.pipeline import Pipeline, Setting
from envguard.watch.records import SliceRun, WatchRun


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
    advised: Setting | None = None  # the whole DataLoader setting advised (--apply-and-measure puts it in)


Verdict = Literal["holds", "smaller", "larger", "helps", "contradicts", "not checked"]


@dataclass(frozen=True, slots=True)
class Checked:
    """--apply-and-measure: the advice run against the current setting in interleaved slices, or why it
    was not. Rates are the dominant loader's steady batches/s per slice; `current_rate`/`advised_rate`
    their medians; `measured_gain` advised over current beside the model's `predicted_gain`; `text` the one
    line the views print."""

    verdict: Verdict
    text: str
    change: str = ""  # what the advised slices ran with: DataLoader(...) or torch.set_num_threads(K)
    current_rates: tuple[float, ...] = ()
    advised_rates: tuple[float, ...] = ()
    current_rate: float | None = None
    advised_rate: float | None = None
    measured_gain: float | None = None
    predicted_gain: float | None = None
    overlap: bool = False  # the two sides' slices overlap: the difference is within their spread
    slices: tuple[SliceRun, ...] = ()


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
    checked: Checked | None = None  # --apply-and-measure's slices and their verdict


@dataclass(frozen=True, slots=True)
class WatchResult:
    run: WatchRun
    diagnosis: Diagnosis
