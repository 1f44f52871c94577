"""The smoke test's result model: what the user asked for, the sweep analysed per dataset, the
recommendations, the findings, and the measured records the report shows (render.py turns it into JSON, the
human view and Markdown)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from envguard.findings import Finding
from envguard.machine.host import CpuInfo, ShmInfo
from envguard.pipeline import Advice, Threads
from envguard.smoke.measured import UNMEASURED, GpuPhase, MemoryUse, SeededRuns
from envguard.smoke.measured_pipeline import (
    CrossProcess,
    LoaderChecks,
    StartMethodSafety,
    StartupTimes,
    WorkerMemory,
)
from envguard.smoke.readpasses import StorageResult

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
    step_cores: float = 0.0  # --step-cores: the cores the user's step keeps busy (the model's advice only)
    step_threads: int | None = None  # --step-threads: its intra-op threads; None: torch's default there
    loader: str | None = None  # FILE.py:NAME returning the user's own DataLoader (issue 10)
    start_method: str | None = None  # fork, spawn or forkserver for every DataLoader; None: the default
    local_ranks: int = 1  # processes per node sharing the RAM (the copy-on-read projection)
    sweep: tuple[str, ...] | None = None  # --sweep: the loader arguments envguard may vary (issue 10)
    decode: str | None = None  # --decode image: the --data sweep decodes each file with PIL (issue 10)
    record: Path | None = None  # --record FILE.json: the first batches' digests and the fingerprints
    compare: Path | None = None  # --compare FILE.json: check them against a recording
    memory_limit: int | None = None  # --memory-limit, bytes per process; None: the machine's default, 0: none
    advice_only: bool = False  # doctor --loader: the loader's settings and its dataset's profile, no checks


@dataclass(frozen=True, slots=True)
class WorkerAdvice:
    """doctor --loader: the input-pipeline model's setting for the user's loader (None when its dataset could
    not be profiled, or the step's threads come first: `threads`) and the findings: the advice with its
    figures, or why there is none."""

    loader: str
    advice: Advice | None
    findings: tuple[Finding, ...]
    threads: Threads | None = None


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
    rate_spread: float | None = None  # the rate's relative uncertainty (95% band: fit, or passes)
    pass_rates: tuple[tuple[int, float], ...] = ()  # interleaved --sweep: (round, samples/s) of each pass
    step_s: float = 0.0  # the simulated training step after each batch
    main_cpu_s: float | None = None  # the main process's CPU clock over the row
    given: bool = False  # --sweep: the user's loader exactly as given (kept whatever its rate)
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
    off_ms: float | None = None  # per sample off the CPU (sleep, I/O), run-queue time left out
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
    tied_with: int | None = None  # a worker count measured within the spread of the recommended one
    rule: str = "measured"  # measured: the rates separate; model: the input-pipeline model chose among ties
    predicted_per_s: float | None = None  # the model's samples/s for this setting (CPU clocks, the cores)
    dataloader: str = (
        ""  # DataLoader(num_workers=..., prefetch_factor=..., persistent_workers=..., pin_memory=...)
    )
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PipelineRecords:
    """The user's pipeline as measured (--dataset/--loader, issue 10): start-method safety, the loader as
    given, per-worker memory, start-up per start method and the fresh interpreters."""

    start_method_safety: StartMethodSafety | None = None
    loader: LoaderChecks | None = None
    memory: WorkerMemory | None = None
    startup: StartupTimes | None = None
    cross_process: CrossProcess | None = None


@dataclass(frozen=True, slots=True)
class RecordingCompared:
    """--compare FILE.json: the recording's path and samples, and how many this run delivered."""

    path: str
    samples: int
    now: int


@dataclass(frozen=True, slots=True)
class RecordingWritten:
    path: str
    samples: int


@dataclass(frozen=True, slots=True)
class RecordingOutcome:
    """--record / --compare: what was compared and what was written."""

    compared: RecordingCompared | None = None
    written: RecordingWritten | None = None


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
    determinism: SeededRuns | None
    gpu: GpuPhase | None
    findings: tuple[Finding, ...]
    budget_s: float
    elapsed_s: float
    options: SmokeOptions = SmokeOptions()
    phase_seconds: Mapping[str, float] = field(default_factory=dict)
    pipeline: PipelineRecords = PipelineRecords()
    storage: StorageResult | None = None  # --data: cold/warm reads, page cache (issue 10)
    decode_skipped: str | None = None  # --decode image: why decoding was not timed
    recording: RecordingOutcome = RecordingOutcome()
    memory: MemoryUse = UNMEASURED  # the limit each process ran under and the most one held (issue 28)
