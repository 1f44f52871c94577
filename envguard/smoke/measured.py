"""What the in-environment module measured: the smoke wire's schema, as msgspec Structs decoded once from its
JSON line (`decode`), and read by everything downstream (analysis, verdicts, rendering), never the JSON.

Each Struct's field is a key the module prints (its encoded name where the attribute reads better under
another); the module ships TypedDicts of the same names (envguard_smoke/schema.py) and a test holds the two
to the same keys. The records follow the module's phases: the throughput sweep (per configuration, per
batch), the seeded determinism runs, the GPU phase, the user's pipeline (measured_pipeline.py) and the first
batches for --record/--compare. A record whose absent fields the module leaves out rather than printing null
omits its defaults when rendered (render.as_printed).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from envguard.errors import ProbeError
from envguard.model import Fingerprints
from envguard.pipeline import Setting
from envguard.smoke.measured_pipeline import (
    CrossProcess,
    LoaderChecks,
    Record,
    SkippedCheck,
    StartMethodSafety,
    StartupTimes,
    WorkerMemory,
)

# -- the throughput sweep: one entry per dataset, one row per DataLoader configuration, one time per batch


class SweepPass(Record, frozen=True):
    """One pass of an interleaved sweep (--sweep): a fresh iterator timed for a few rounds, in `round` of
    the rounds every configuration ran in turn; per batch, seconds from iter(loader) to its arrival and how
    long next() blocked."""

    round: int
    arrivals_s: tuple[float, ...] = ()
    waits_s: tuple[float, ...] = ()
    wall_s: float | None = None
    main_cpu_s: float | None = None


class ConfigMeasurement(Record, frozen=True):
    """One configuration's raw timings (prefetch_factor: rows of --sweep only); `skipped` says why it was not
    measured (then nothing else is set). `passes`: an interleaved sweep's passes (then `arrivals_s` is the
    first pass's, for its start-up). The machine meanwhile, as shares of the window: others' CPU
    (/proc/stat), cgroup throttling (cpu.stat), some task waiting for a CPU (/proc/pressure/cpu)."""

    workers: int
    pin_memory: bool = False
    persistent_workers: bool = False
    prefetch_factor: int | None = None
    reason: str | None = msgspec.field(default=None, name="skipped")
    batch_size: int = 0
    batches: int = 0
    batch_bytes: int | None = None
    arrivals_s: tuple[float, ...] = ()
    waits_s: tuple[float, ...] = ()
    epoch2_first_batch_s: float | None = None  # the next epoch's first batch (workers started again or not)
    step_s: float | None = None  # the simulated training step after each batch
    wall_s: float | None = None
    main_cpu_s: float | None = None
    others_cpu: float | None = msgspec.field(default=None, name="others_cpu_fraction")
    throttled: float | None = msgspec.field(default=None, name="throttled_fraction")
    psi_some: float | None = msgspec.field(default=None, name="psi_some_fraction")
    given: bool = False  # --sweep: the user's loader exactly as given
    passes: tuple[SweepPass, ...] = ()

    @property
    def skipped(self) -> str:
        """Why the row has no rate ("" when it has one): the module's reason, or no batches arrived."""
        return self.reason or ("" if self.arrivals_s else "no batches")

    @property
    def setting(self) -> Setting:
        return Setting(self.workers, self.prefetch_factor, self.persistent_workers, self.pin_memory)


class SampleCost(Record, frozen=True):
    """Median per-sample wall and CPU milliseconds, profiled in one DataLoader worker; `others_cores`: the
    cores other processes kept busy meanwhile (--loader's profile); `threads`: torch's intra-op threads in
    the profiling interpreter (what a step in this environment runs unless it sets its own)."""

    wall_ms: float | None = None
    cpu_ms: float | None = None
    samples: int = 0
    off_ms: float | None = None  # off the CPU (sleep, I/O), run-queue time left out
    others_cores: float | None = None
    threads: int | None = None
    cpus: int | None = None  # the host's CPUs `others_cores` was read over (/proc/stat counts them all)


class DatasetSweep(Record, frozen=True):
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


class Observation(Record, frozen=True):
    """One delivered sample: the worker that read it, its identity (the sampler's index) and field digests."""

    worker: int = msgspec.field(name="w")
    identity: str = msgspec.field(name="id")
    fields: Mapping[str, str] = msgspec.field(name="f")


class SeededRun(Record, frozen=True):
    """One seeded DataLoader run (w0, w0-repeat, wN, wN-repeat, wN-persistent, w1): each epoch's samples."""

    workers: int
    persistent: bool
    epochs: tuple[tuple[Observation, ...], ...]
    order_digests: tuple[str, ...]
    stream_digests: tuple[str, ...]
    seconds: float


class SeededRuns(Record, frozen=True):
    seed: int
    batch_size: int
    limit: int
    dataset: str | None = None
    runs: Mapping[str, SeededRun] = msgspec.field(default_factory=dict)
    skipped: tuple[str, ...] = ()


# -- the GPU phase (shown as measured: the fields left out where the module prints no key)


class Roundtrip(Record, frozen=True):
    """A real batch copied host -> device -> host, digested before and after."""

    host: str
    after_device: str
    equal: bool
    structure: str
    tensors: int
    bytes: int


class PcieLink(Record, frozen=True, omit_defaults=True):
    """The PCIe link as NVML read it under load; `reason` when it could not be read."""

    available: bool
    reason: str | None = None
    gen: int | None = None
    width: int | None = None
    max_gen: int | None = None
    max_width: int | None = None
    copies_queued: int | None = None


class HostToDevice(Record, frozen=True, omit_defaults=True):
    bytes: int
    reps: int
    pageable_gbps: float | None
    pinned_gbps: float | None
    link: PcieLink
    pinned_reason: str | None = None


class IdleRun(Record, frozen=True):
    """How idle the device sat while a fake training step consumed this many workers' batches."""

    workers: int
    pin_memory: bool
    warmup_batches: int
    batches: int
    step_ms: float
    busy_ms: float
    span_ms: float
    idle_fraction: float | None


class GpuPhase(Record, frozen=True, omit_defaults=True):
    device: str
    name: str
    idle: tuple[IdleRun, ...]
    roundtrip: Roundtrip | None = None
    h2d: HostToDevice | None = None
    idle_skipped: tuple[int, ...] | None = None
    capability: str | None = None
    memory_bytes: int | None = None
    arch_list: tuple[str, ...] | None = None
    uuid: str | None = None


# -- the run as a whole


class SampleDigests(Record, frozen=True):
    """One sample of the first batches, by the index the sampler produced: field -> digest."""

    index: str
    fields: Mapping[str, str]


class FirstBatches(Record, frozen=True):
    """--record/--compare: the first batches as the DataLoader would deliver them."""

    dataset: str | None = None
    batch_size: int | None = None
    samples: tuple[SampleDigests, ...] = ()


class PhaseError(Record, frozen=True):
    """A phase that raised inside the environment: its last traceback line."""

    phase: str
    error: str


class Stopped(Record, frozen=True):
    """The module was stopped at the --budget: what it was doing, after how long (set by the host)."""

    phase: str
    after_s: float
    pending_s: float | None


class MemoryUse(Record, frozen=True):
    """The memory limit the module and each of its workers ran under (None: none), beyond what each had mapped
    after importing torch; `startup_bytes`: the module's resident memory then (torch and its libraries: about
    0.2 GiB with the CPU wheel, 0.5 GiB with the CUDA one); the most any of them held (resident, bytes), and
    `held_bytes`, the most a process that ran out of memory had allocated past its start-up, by its own count;
    `oom_kills`: how many processes the cgroup's OOM killer ended meanwhile (None where unreadable); `killed`:
    the module itself died of it, so nothing else was measured (the last three: the host's view)."""

    limit_bytes: int | None = None
    peak_bytes: int | None = None
    oom_kills: int | None = None
    killed: bool = False
    startup_bytes: int | None = None
    held_bytes: int | None = None

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


class Measured(Record, frozen=True):
    """Everything one run of the in-environment module printed. `refusal` (torch-missing, cuda-unavailable,
    bad-loader, bad-dataset) means it did not start its phases; `stopped` that envguard stopped it at the
    budget and these are the results so far."""

    python: str | None = None
    executable: str | None = None
    elapsed_s: float | None = None
    cuda_available: bool | None = None
    torch: str | None = None
    torch_cuda: str | None = None
    numpy: str | None = None
    device: str | None = None
    start_method: str | None = None
    refusal: str | None = msgspec.field(default=None, name="error")
    message: str | None = None
    errors: tuple[PhaseError, ...] = ()
    datasets: tuple[DatasetSweep, ...] = msgspec.field(default=(), name="throughput")
    determinism: SeededRuns | None = None
    gpu: GpuPhase | None = None
    golden: Fingerprints | None = None
    phase_seconds: Mapping[str, float] = msgspec.field(default_factory=dict)
    start_method_safety: StartMethodSafety | None = None
    loader: LoaderChecks | None = None
    memory: WorkerMemory | None = None
    startup: StartupTimes | None = None
    crossproc: CrossProcess | None = None
    pipeline_skipped: tuple[SkippedCheck, ...] = ()
    decode_skipped: str | None = None
    first_batches: FirstBatches | None = msgspec.field(default=None, name="record")
    stopped: Stopped | None = None
    loader_profile: SampleCost | None = None  # --loader without --sweep: its dataset's per-sample cost
    memory_use: MemoryUse = msgspec.field(default=UNMEASURED, name="memory_limit")


_DECODER = msgspec.json.Decoder(Measured)


def decode(text: str | bytes, source: object) -> Measured:
    """The module's JSON as records, decoded and checked once; anything malformed is one ProbeError line
    naming `source` (the interpreter) and the place in the output (`$.throughput[0].rows[2].workers`)."""
    try:
        return _DECODER.decode(text)
    except msgspec.ValidationError as exc:
        raise ProbeError(
            f"{source}: the smoke test printed malformed output ({exc}); the in-environment module and this "
            "envguard disagree: run the envguard that started it, or reinstall envguard"
        ) from None
    except msgspec.DecodeError as exc:
        raise ProbeError(f"{source}: the smoke test printed unreadable output ({exc})") from None
