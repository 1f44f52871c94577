"""The smoke wire as this module prints it: one TypedDict per record, named and keyed as the host's msgspec
Structs (envguard/smoke/measured.py, measured_pipeline.py; a loader's settings: envguard/pipeline/costs.py's
Setting), which decode and check it; a test holds the two
to the same keys. Plain typing only (Python 3.8+, no envguard, no msgspec): `total=False`, since a phase
stopped at the budget leaves its keys out, and the host's Structs say which keys a record must have.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict


class Unpicklable(TypedDict, total=False):
    name: str
    kind: str
    type: str
    fix: str
    error: str


class StartMethodSafety(TypedDict, total=False):
    method: str
    checked: List[str]
    problems: List[Unpicklable]


class Setting(TypedDict, total=False):
    num_workers: int
    prefetch_factor: Optional[int]
    persistent_workers: bool
    pin_memory: bool
    batch_size: Optional[int]
    sampler: Optional[str]
    generator: bool
    worker_init_fn: Optional[str]
    collate_fn: Optional[str]
    dataset: Optional[str]
    threads: Optional[int]


class IdentityEpoch(TypedDict, total=False):
    epoch: int
    batches: int
    random: int
    differ: List[List[str]]
    stale: int


class IdentityRecord(TypedDict, total=False):
    num_workers: int
    persistent_workers: bool
    collate_fn: Optional[str]
    set_epoch: bool
    epochs: List[IdentityEpoch]


class LoaderChecks(TypedDict, total=False):
    settings: Setting
    limit: int
    iterable: bool
    run1: List[List[str]]
    run2: List[List[str]]
    first_batch_s: Optional[float]
    identity: Optional[IdentityRecord]


class ProcessMemory(TypedDict, total=False):
    uss: int
    pss: int


class Culprit(TypedDict, total=False):
    name: str
    container: str
    length: int
    items: List[str]


class WorkerMemory(TypedDict, total=False):
    workers: int
    indices: int
    length: int
    sample_bytes: int
    start_after: int
    parent: Optional[ProcessMemory]
    culprits: List[Culprit]
    start: Dict[str, Optional[ProcessMemory]]
    parent_start: Optional[ProcessMemory]
    end: Dict[str, Optional[ProcessMemory]]
    parent_end: Optional[ProcessMemory]


class StartupTimes(TypedDict, total=False):
    in_use: str
    workers: int
    seconds: Dict[str, float]
    unpicklable: bool
    persistent_workers: bool


class InterpreterRead(TypedDict, total=False):
    order: Optional[List[str]]
    samples: Optional[Dict[str, Dict[str, str]]]
    error: Optional[str]


class CrossProcess(TypedDict, total=False):
    limit: int
    seconds: float
    seeds: List[str]
    runs: Dict[str, InterpreterRead]
    control: Optional[str]


class SkippedCheck(TypedDict, total=False):
    phase: str
    needs_s: float
    left_s: Optional[float]


class SweepPass(TypedDict, total=False):
    round: int
    arrivals_s: List[float]
    waits_s: List[float]
    wall_s: Optional[float]
    main_cpu_s: Optional[float]


class ConfigMeasurement(TypedDict, total=False):
    workers: int
    pin_memory: bool
    persistent_workers: bool
    prefetch_factor: Optional[int]
    skipped: Optional[str]
    batch_size: int
    batches: int
    batch_bytes: Optional[int]
    arrivals_s: List[float]
    waits_s: List[float]
    epoch2_first_batch_s: Optional[float]
    step_s: Optional[float]
    wall_s: Optional[float]
    main_cpu_s: Optional[float]
    others_cpu_fraction: Optional[float]
    throttled_fraction: Optional[float]
    psi_some_fraction: Optional[float]
    given: bool
    passes: List[SweepPass]


class SampleCost(TypedDict, total=False):
    wall_ms: Optional[float]
    cpu_ms: Optional[float]
    samples: int
    off_ms: Optional[float]
    others_cores: Optional[float]
    threads: Optional[int]
    cpus: Optional[int]


class DatasetSweep(TypedDict, total=False):
    name: str
    nominal_latency_ms: Optional[float]
    nominal_cpu_ms: Optional[float]
    length: Optional[int]
    iterable: bool
    profile: Optional[SampleCost]
    rows: List[ConfigMeasurement]
    error: str


class Observation(TypedDict, total=False):
    w: int
    id: str
    f: Dict[str, str]


class SeededRun(TypedDict, total=False):
    workers: int
    persistent: bool
    epochs: List[List[Observation]]
    order_digests: List[str]
    stream_digests: List[str]
    seconds: float


class SeededRuns(TypedDict, total=False):
    seed: int
    batch_size: int
    limit: int
    dataset: Optional[str]
    runs: Dict[str, SeededRun]
    skipped: List[str]


class Roundtrip(TypedDict, total=False):
    host: str
    after_device: str
    equal: bool
    structure: str
    tensors: int
    bytes: int


class PcieLink(TypedDict, total=False):
    available: bool
    reason: Optional[str]
    gen: Optional[int]
    width: Optional[int]
    max_gen: Optional[int]
    max_width: Optional[int]
    copies_queued: Optional[int]


class HostToDevice(TypedDict, total=False):
    bytes: int
    reps: int
    pageable_gbps: Optional[float]
    pinned_gbps: Optional[float]
    link: PcieLink
    pinned_reason: Optional[str]


class IdleRun(TypedDict, total=False):
    workers: int
    pin_memory: bool
    warmup_batches: int
    batches: int
    step_ms: float
    busy_ms: float
    span_ms: float
    idle_fraction: Optional[float]


class GpuPhase(TypedDict, total=False):
    device: str
    name: str
    idle: List[IdleRun]
    roundtrip: Optional[Roundtrip]
    h2d: Optional[HostToDevice]
    idle_skipped: Optional[List[int]]
    capability: Optional[str]
    memory_bytes: Optional[int]
    arch_list: Optional[List[str]]
    uuid: Optional[str]


class SampleDigests(TypedDict, total=False):
    index: str
    fields: Dict[str, str]


class FirstBatches(TypedDict, total=False):
    dataset: Optional[str]
    batch_size: Optional[int]
    samples: List[SampleDigests]


class PhaseError(TypedDict, total=False):
    phase: str
    error: str


class MemoryUse(TypedDict, total=False):
    limit_bytes: Optional[int]
    peak_bytes: Optional[int]
    startup_bytes: Optional[int]


class Measured(TypedDict, total=False):
    cuda_available: bool
    elapsed_s: float
    python: Optional[str]
    executable: Optional[str]
    torch: Optional[str]
    torch_cuda: Optional[str]
    numpy: Optional[str]
    device: Optional[str]
    start_method: Optional[str]
    error: Optional[str]
    message: Optional[str]
    errors: List[PhaseError]
    throughput: List[DatasetSweep]
    determinism: Optional[SeededRuns]
    gpu: Optional[GpuPhase]
    golden: Optional[Dict[str, Any]]
    phase_seconds: Dict[str, float]
    start_method_safety: Optional[StartMethodSafety]
    loader: Optional[LoaderChecks]
    memory: Optional[WorkerMemory]
    startup: Optional[StartupTimes]
    crossproc: Optional[CrossProcess]
    pipeline_skipped: List[SkippedCheck]
    decode_skipped: Optional[str]
    record: Optional[FirstBatches]
    loader_profile: Optional[SampleCost]
    memory_limit: MemoryUse
