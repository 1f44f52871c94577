"""What the in-environment module measured, as frozen records: `wire.parse` builds them once from its JSON
line, and everything downstream (analysis, verdicts, rendering) reads these, never the JSON.

The records follow the module's phases: the throughput sweep (per configuration, per batch), the seeded
determinism runs, the GPU phase, the user's pipeline (measured_pipeline.py) and the first batches for
--record/--compare. Records the report shows as measured (the GPU phase, the pipeline's) keep every field the
module printed; a field declared with ABSENT is one the module leaves out rather than printing null
(render.to_dict leaves it out too).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from envguard.model import Fingerprints
from envguard.smoke.measured_pipeline import (
    CrossProcess,
    LoaderChecks,
    SkippedCheck,
    StartMethodSafety,
    StartupTimes,
    WorkerMemory,
)

# field metadata of a key the module prints only when it has a value: None here means no such key in the JSON
ABSENT_KEY = "absent_when_none"
ABSENT = MappingProxyType({ABSENT_KEY: True})


# -- the throughput sweep: one entry per dataset, one row per DataLoader configuration, one time per batch


@dataclass(frozen=True, slots=True)
class LoaderConfig:
    """The DataLoader arguments one row was measured with (prefetch_factor: rows of --sweep only)."""

    workers: int
    pin_memory: bool
    persistent_workers: bool
    prefetch_factor: int | None = None


@dataclass(frozen=True, slots=True)
class BatchTimes:
    """Per batch, in delivery order: seconds from iter(loader) to its arrival, and how long next() blocked."""

    arrivals_s: tuple[float, ...] = ()
    waits_s: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class CpuContention:
    """The machine meanwhile, as shares of the window: others' CPU (/proc/stat), cgroup throttling (cpu.stat),
    some task waiting for a CPU (/proc/pressure/cpu); None where not readable."""

    others_cpu: float | None = None
    throttled: float | None = None
    psi_some: float | None = None


@dataclass(frozen=True, slots=True)
class Pass:
    """One pass of an interleaved sweep (--sweep): a fresh iterator timed for a few rounds, in `round` of
    the rounds every configuration ran in turn."""

    round: int
    times: BatchTimes
    wall_s: float | None = None
    main_cpu_s: float | None = None


@dataclass(frozen=True, slots=True)
class ConfigMeasurement:
    """One configuration's raw timings; `skipped` says why it was not measured (then nothing else is set).
    `passes`: an interleaved sweep's passes (then `times` is the first pass's, for its start-up)."""

    config: LoaderConfig
    skipped: str = ""
    batch_size: int = 0
    batches: int = 0
    batch_bytes: int = 0
    times: BatchTimes = BatchTimes()
    epoch2_first_batch_s: float | None = None  # the next epoch's first batch (workers started again or not)
    step_s: float = 0.0  # the simulated training step after each batch
    wall_s: float | None = None
    main_cpu_s: float | None = None
    contention: CpuContention = CpuContention()
    given: bool = False  # --sweep: the user's loader exactly as given
    passes: tuple[Pass, ...] = ()


@dataclass(frozen=True, slots=True)
class SampleCost:
    """Median per-sample wall and CPU milliseconds, profiled in one DataLoader worker; `others_cores`: the
    cores other processes kept busy meanwhile (--loader's profile); `threads`: torch's intra-op threads in
    the profiling interpreter (what a step in this environment runs unless it sets its own)."""

    wall_ms: float | None
    cpu_ms: float | None
    samples: int = 0
    off_ms: float | None = None  # off the CPU (sleep, I/O), run-queue time left out
    others_cores: float | None = None
    threads: int | None = None
    cpus: int | None = None  # the host's CPUs `others_cores` was read over (/proc/stat counts them all)


@dataclass(frozen=True, slots=True)
class DatasetSweep:
    """One dataset's sweep: its per-sample cost (nominal for the synthetic ones, else `profile`) and rows."""

    name: str
    nominal_latency_ms: float | None = None
    nominal_cpu_ms: float | None = None
    length: int | None = None
    iterable: bool = False
    profile: SampleCost | None = None
    rows: tuple[ConfigMeasurement, ...] = ()
    error: str = ""


# -- the seeded determinism runs


@dataclass(frozen=True, slots=True)
class Observation:
    """One delivered sample: the worker that read it, its identity (the sampler's index) and field digests."""

    worker: int
    identity: str
    fields: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class SeededRun:
    """One seeded DataLoader run (w0, w0-repeat, wN, wN-repeat, wN-persistent, w1): each epoch's samples."""

    workers: int
    persistent: bool
    epochs: tuple[tuple[Observation, ...], ...]
    order_digests: tuple[str, ...]
    stream_digests: tuple[str, ...]
    seconds: float


@dataclass(frozen=True, slots=True)
class SeededRuns:
    dataset: str | None
    seed: int
    batch_size: int
    limit: int
    runs: Mapping[str, SeededRun]
    skipped: tuple[str, ...] = ()


# -- the GPU phase (shown as measured)


@dataclass(frozen=True, slots=True)
class Roundtrip:
    """A real batch copied host -> device -> host, digested before and after."""

    host: str
    after_device: str
    equal: bool
    structure: str
    tensors: int
    bytes: int


@dataclass(frozen=True, slots=True)
class PcieLink:
    """The PCIe link as NVML read it under load; `reason` when it could not be read."""

    available: bool
    reason: str | None = field(default=None, metadata=ABSENT)
    gen: int | None = field(default=None, metadata=ABSENT)
    width: int | None = field(default=None, metadata=ABSENT)
    max_gen: int | None = field(default=None, metadata=ABSENT)
    max_width: int | None = field(default=None, metadata=ABSENT)
    copies_queued: int | None = field(default=None, metadata=ABSENT)


@dataclass(frozen=True, slots=True)
class HostToDevice:
    bytes: int
    reps: int
    pageable_gbps: float | None
    pinned_gbps: float | None
    link: PcieLink
    pinned_reason: str | None = field(default=None, metadata=ABSENT)


@dataclass(frozen=True, slots=True)
class IdleRun:
    """How idle the device sat while a fake training step consumed this many workers' batches."""

    workers: int
    pin_memory: bool
    warmup_batches: int
    batches: int
    step_ms: float
    busy_ms: float
    span_ms: float
    idle_fraction: float | None


@dataclass(frozen=True, slots=True)
class GpuPhase:
    device: str
    name: str
    roundtrip: Roundtrip | None = field(default=None, metadata=ABSENT)
    h2d: HostToDevice | None = field(default=None, metadata=ABSENT)
    idle: tuple[IdleRun, ...] = ()
    idle_skipped: tuple[int, ...] | None = field(default=None, metadata=ABSENT)
    capability: str | None = field(default=None, metadata=ABSENT)
    memory_bytes: int | None = field(default=None, metadata=ABSENT)
    arch_list: tuple[str, ...] | None = field(default=None, metadata=ABSENT)
    uuid: str | None = field(default=None, metadata=ABSENT)


# -- the run as a whole


@dataclass(frozen=True, slots=True)
class SampleDigests:
    """One sample of the first batches, by the index the sampler produced: field -> digest."""

    index: str
    fields: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class FirstBatches:
    """--record/--compare: the first batches as the DataLoader would deliver them."""

    dataset: str | None
    batch_size: int | None
    samples: tuple[SampleDigests, ...]


@dataclass(frozen=True, slots=True)
class PhaseError:
    """A phase that raised inside the environment: its last traceback line."""

    phase: str
    error: str


@dataclass(frozen=True, slots=True)
class Stopped:
    """The module was stopped at the --budget: what it was doing, after how long."""

    phase: str
    after_s: float
    pending_s: float | None


@dataclass(frozen=True, slots=True)
class MemoryUse:
    """The memory limit the module and each of its workers ran under (None: none), beyond what each had mapped
    after importing torch; `startup_bytes`: the module's resident memory then (torch and its libraries: about
    0.2 GiB with the CPU wheel, 0.5 GiB with the CUDA one); the most any of them held (resident, bytes), and
    `held_bytes`, the most a process that ran out of memory had allocated past its start-up, by its own count;
    `oom_kills`: how many processes the cgroup's OOM killer ended meanwhile (None where unreadable); `killed`:
    the module itself died of it, so nothing else was measured."""

    limit_bytes: int | None = None
    peak_bytes: int | None = None
    oom_kills: int | None = None
    killed: bool = False
    startup_bytes: int | None = None
    held_bytes: int | None = None  # the most a process that ran out had allocated past its start-up

    @property
    def reached_bytes(self) -> int | None:
        """The most a process held beyond its start-up, as the limit counts it: its own count where one ran
        out, else the resident peak less the start-up (the peak where the start-up is not known)."""
        if self.held_bytes is not None:
            return self.held_bytes
        if self.peak_bytes is None:
            return None
        return max(0, self.peak_bytes - (self.startup_bytes or 0))


UNMEASURED = MemoryUse()


@dataclass(frozen=True, slots=True)
class Measured:
    """Everything one run of the in-environment module printed. `refusal` (torch-missing, cuda-unavailable,
    bad-loader, bad-dataset) means it did not start its phases; `stopped` that envguard stopped it at the
    budget and these are the results so far."""

    python: str | None = None
    executable: str | None = None
    torch: str | None = None
    torch_cuda: str | None = None
    numpy: str | None = None
    device: str | None = None
    start_method: str | None = None
    refusal: str | None = None
    message: str | None = None
    errors: tuple[PhaseError, ...] = ()
    datasets: tuple[DatasetSweep, ...] = ()
    determinism: SeededRuns | None = None
    gpu: GpuPhase | None = None
    golden: Fingerprints | None = None
    phase_seconds: Mapping[str, float] = field(default_factory=dict)
    start_method_safety: StartMethodSafety | None = None
    loader: LoaderChecks | None = None
    memory: WorkerMemory | None = None
    startup: StartupTimes | None = None
    crossproc: CrossProcess | None = None
    pipeline_skipped: tuple[SkippedCheck, ...] = ()
    decode_skipped: str | None = None
    first_batches: FirstBatches | None = None
    stopped: Stopped | None = None
    loader_profile: SampleCost | None = None  # --loader without --sweep: its dataset's per-sample cost
    memory_use: MemoryUse = UNMEASURED
