"""The smoke test's result model: frozen dataclasses, JSON with a schema_version."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from envguard.findings import Finding
from envguard.machine.host import CpuInfo, ShmInfo

SCHEMA_VERSION = 1
Device = Literal["auto", "cpu", "cuda"]
Bound = Literal["io", "cpu"]


@dataclass(frozen=True, slots=True)
class SmokeOptions:
    """What the user asked for. `workers` None means 0 up to the usable CPUs."""

    source: str | None = None
    device: Device = "auto"
    budget_s: float = 28.0
    workers: tuple[int, ...] | None = None
    num_workers: int | None = None
    batch_size: int = 32
    io_ms: float = 10.0
    cpu_ms: float = 5.0
    data_dir: Path | None = None
    dataset: str | None = None
    lock: Path | None = None
    seed: int = 1234
    step_ms: float | None = None  # simulated training step; None: half the ideal time between batches
    loader: str | None = None  # FILE.py:NAME returning the user's own DataLoader (issue 10)
    start_method: str | None = None  # fork, spawn or forkserver for every DataLoader; None: the default
    local_ranks: int = 1  # processes per node sharing the RAM (the copy-on-read projection)
    sweep: tuple[str, ...] | None = None  # --sweep: the loader arguments envguard may vary (issue 10)
    decode: str | None = None  # --decode image: the --data sweep decodes each file with PIL (issue 10)
    record: Path | None = None  # --record FILE.json: the first batches' digests and the fingerprints
    compare: Path | None = None  # --compare FILE.json: check them against a recording


@dataclass(frozen=True, slots=True)
class SweepRow:
    """One DataLoader configuration's timings; `skipped` says why a row was not measured."""

    workers: int
    pin_memory: bool
    persistent_workers: bool
    batches: int = 0
    batch_size: int = 0
    batch_bytes: int = 0
    first_batch_s: float | None = None
    startup_s: float | None = None
    epoch2_first_batch_s: float | None = None
    samples_per_s: float | None = None
    ideal_per_s: float | None = None
    efficiency: float | None = None
    wait_p50_s: float | None = None
    wait_p95_s: float | None = None
    others_cpu: float | None = None  # other processes' share of the CPUs (/proc/stat, windows >= 1 s)
    throttled: float | None = None  # share of the window the cgroup quota throttled us (cpu.stat)
    psi_some: float | None = None  # share of the window some task waited for a CPU (/proc/pressure/cpu)
    skipped: str = ""
    rounds: int = 0  # complete rounds of `workers` batches (round 0, start-up, is not in the rate)
    few_rounds: bool = False  # fewer than MIN_STEADY_ROUNDS after round 0: the budget could not fit them
    unreliable: str = ""  # why the rate is not reported (an efficiency above the physical limit)
    rate_spread: float | None = None  # the rate's relative uncertainty (95% band of the fit)
    arrivals_s: tuple[float, ...] = ()  # raw: each batch's arrival, seconds after iter(loader)
    waits_s: tuple[float, ...] = ()  # raw: how long the loop blocked in next() for each batch


@dataclass(frozen=True, slots=True)
class DatasetResult:
    """A swept dataset: per-sample cost (nominal for synthetic ones, measured otherwise) and its rows."""

    name: str
    bound: Bound
    latency_ms: float | None
    cpu_ms: float | None
    nominal: bool
    length: int | None = None
    iterable: bool = False
    batch_bytes: int = 0
    rows: tuple[SweepRow, ...] = ()
    error: str = ""

    def measured(self) -> tuple[SweepRow, ...]:
        return tuple(r for r in self.rows if not r.skipped and r.samples_per_s)

    def row(self, workers: int, pin_memory: bool, persistent_workers: bool) -> SweepRow | None:
        for r in self.measured():
            if (r.workers, r.pin_memory, r.persistent_workers) == (workers, pin_memory, persistent_workers):
                return r
        return None


@dataclass(frozen=True, slots=True)
class Recommendation:
    dataset: str
    workers: int
    pin_memory: bool
    persistent_workers: bool
    samples_per_s: float
    efficiency: float | None
    reason: str
    tied_with: int | None = None  # a worker count within the measurements' spread (the fewer are given)


@dataclass(frozen=True, slots=True)
class SmokeReport:
    environment: str
    python: str
    torch: str | None
    numpy: str | None
    device: str
    start_method: str
    cpus: CpuInfo
    shm: ShmInfo
    datasets: tuple[DatasetResult, ...]
    recommendations: tuple[Recommendation, ...]
    determinism: dict[str, Any]
    gpu: dict[str, Any] | None
    findings: tuple[Finding, ...]
    budget_s: float
    elapsed_s: float
    options: dict[str, Any] = field(default_factory=dict)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    # start-method safety, cross-process and --loader runs (issue 10)
    pipeline: dict[str, Any] = field(default_factory=dict)
    storage: dict[str, Any] = field(default_factory=dict)  # --data: cold/warm reads, page cache (issue 10)
    recording: dict[str, Any] = field(default_factory=dict)  # --record / --compare: which file, how many
    schema_version: int = SCHEMA_VERSION


def to_dict(report: SmokeReport) -> dict[str, Any]:
    """JSON-ready dict with `schema_version` first."""
    data = dataclasses.asdict(report)
    ordered: dict[str, Any] = {"schema_version": data.pop("schema_version")}
    ordered.update(data)
    return ordered


def options_dict(options: SmokeOptions) -> dict[str, Any]:
    data = dataclasses.asdict(options)
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in data.items()}
