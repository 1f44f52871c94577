"""What `envguard watch` measured (frozen records): one sample per interval (process tree, host, GPUs, the
hook's loader totals) and the whole run. The hook's wire (LoaderTotals with its pipeline Setting, FetchTotals,
JobEnvironment: the keys hook/sitecustomize.py prints) is msgspec Structs that streams.py decodes once; the
rest are what envguard samples itself. JSON-ready through msgspec.to_builtins."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import quantiles
from typing import Literal

import msgspec

from envguard.pipeline import Setting

Role = Literal["main", "worker", "other"]


@dataclass(frozen=True, slots=True)
class ProcSample:
    """One process of the watched tree. cpu: percent of one core since the last sample (0..100 x threads)."""

    pid: int
    ppid: int
    name: str
    role: Role
    cpu: float
    core: int | None
    threads: int
    rss: int
    uss: int | None
    state: str
    read_bytes: int | None
    read_rate: float | None


@dataclass(frozen=True, slots=True)
class HostSample:
    """cpu/per_core/iowait/steal in percent of the whole machine (0..100); psi_*: 'some' avg10 in percent."""

    cpu: float
    per_core: tuple[float, ...]
    iowait: float | None
    steal: float | None
    psi_cpu: float | None
    psi_io: float | None
    mem_total: int
    mem_available: int
    swap_used: int
    shm_used: int | None
    shm_total: int | None
    disk_read: dict[str, float] = field(default_factory=dict)  # disk -> bytes/s


@dataclass(frozen=True, slots=True)
class GpuSample:
    index: int
    name: str
    used_by_tree: bool
    utilization: int | None
    memory_used: int | None
    memory_total: int | None
    pcie_rx: float | None  # bytes/s, host -> device
    pcie_tx: float | None
    sm_clock: int | None
    power_w: float | None


class LoaderTotals(msgspec.Struct, frozen=True):
    """Running totals from the in-process hook for one DataLoader of one process (steady state: after the
    first batch of each epoch, which is kept apart as start-up); `pid` and `rank` are its line's."""

    pid: int
    rank: int | None
    id: int
    settings: Setting
    batches: int
    epochs: int
    wait_s: float
    step_s: float
    startup_s: float
    first_s: float
    wait_cpu_s: float = 0.0  # the main process's CPU clock inside next() (receiving, or loading at N=0)
    step_cpu_s: float = 0.0  # ... between two next() calls (the training step, all its threads)
    step_delay_s: float = 0.0  # the main thread's run-queue wait in the step (it wanted a core, got none)
    waits: tuple[float, ...] = ()  # a uniform sample of the steady batches' waits in next(), seconds

    @property
    def loop_s(self) -> float:
        return self.wait_s + self.step_s

    @property
    def data_wait_fraction(self) -> float | None:
        return self.wait_s / self.loop_s if self.loop_s > 0 else None

    def wait_percentiles(self) -> tuple[float, float] | None:
        """(p50, p95) of the per-batch data wait in seconds, from `waits`; None with fewer than 2."""
        if len(self.waits) < 2:
            return None
        cuts = quantiles(self.waits, n=100, method="inclusive")
        return cuts[49], cuts[94]


class FetchTotals(msgspec.Struct, frozen=True):
    """Batches one process produced for one dataset type (fetch and collate_fn): wall, CPU, run-queue and
    off-CPU seconds in total, and the first per-batch wall times (their spread). `worker`: a DataLoader
    worker, whose loop is its parent's (`ppid`); otherwise the loop's own process loaded them
    (num_workers=0)."""

    pid: int
    ppid: int
    worker: bool
    dataset: str
    batches: int
    wall_s: float
    cpu_s: float  # the fetching thread's CPU (one worker thread's cost; the process's where unreadable)
    delay_s: float
    walls: tuple[float, ...] = ()
    off_s: float | None = None  # the fetching thread off the CPU (sleep, I/O): wall - its CPU - run queue


class SpanHeader(msgspec.Struct, frozen=True):
    """The first line of a process's `<pid>.spans` (hook/_envguard_spans.py): the process, its DataLoader
    worker id (None outside a worker), its rank, and its span clock (`clock`, and `perf` read at `wall`)."""

    pid: int
    ppid: int
    worker: int | None = None
    rank: int | None = None
    clock: str = ""
    perf: float = 0.0
    wall: float = 0.0


class Span(msgspec.Struct, frozen=True, array_like=True):
    """One span as the hook writes it: the loop's `wait` in next() (`first`: an epoch's first batch) and
    `step` between two next() calls, or producing one batch (`fetch`, loader -1); start/end in seconds of
    the process's span clock; thread: its native id."""

    kind: Literal["wait", "first", "step", "fetch"]
    start: float
    end: float
    thread: int
    loader: int
    dataset: str


@dataclass(frozen=True, slots=True)
class SpanStream:
    """One process's spans (the last SPANS_KEPT it recorded); `bad`: lines that could not be read."""

    header: SpanHeader
    spans: tuple[Span, ...]
    bad: int = 0


class ApplyReport(msgspec.Struct, frozen=True):
    """What --apply-and-measure's override did inside one process of a slice (the hook's `apply` entry,
    hook/_envguard_apply.py's `Slice.report`): the DataLoader arguments and thread count it was given, how
    many DataLoader calls they went into, the thread count torch then reported, whether the slice stopped
    itself at its bound, and why the override was off (a value it could not use)."""

    dataset: str | None = None
    settings: dict[str, int | bool | None] = msgspec.field(default_factory=dict)
    threads: int | None = None
    loaders: int = 0
    threads_set: int | None = None
    stopped: bool = False
    error: str = ""


@dataclass(frozen=True, slots=True)
class SliceRun:
    """One slice of --apply-and-measure: COMMAND run again for a bounded stretch, with the current setting or
    the advised one put in. `rate`: the dominant loader's steady batches/s (None: it ran none); `settings`:
    what the hook read off that loader (the override's proof); `ended`: the slice stopped itself at its
    bound, the job ended first, or envguard stopped it at its time limit; `workers`: the loader's
    worker processes seen; `lingering`: processes of the slice still alive once it ended (then killed)."""

    side: Literal["current", "advised"]
    batches: int
    loop_s: float
    rate: float | None
    settings: Setting | None
    applied_to: int
    threads_set: int | None
    ended: Literal["slice", "job", "timeout"]
    exit_code: int | None
    wall_s: float
    workers: tuple[int, ...] = ()
    lingering: tuple[int, ...] = ()
    error: str = ""


@dataclass(frozen=True, slots=True)
class Sample:
    t: float  # seconds since the watch started
    procs: tuple[ProcSample, ...]
    host: HostSample
    gpus: tuple[GpuSample, ...]
    loaders: tuple[LoaderTotals, ...]


class JobEnvironment(msgspec.Struct, frozen=True):
    """The watched job's interpreter and libraries, read by the hook inside it."""

    python: str | None = None
    executable: str | None = None
    torch: str | None = None
    torch_cuda: str | None = None  # None: a CPU build
    torch_git: str | None = None
    numpy: str | None = None
    cuda_visible_devices: str | None = None


@dataclass(frozen=True, slots=True)
class HookStatus:
    """What the in-process hook did: off (--no-hook / --pid), waiting (no DataLoader seen), active; errors;
    the job's environment once a DataLoader was iterated."""

    state: Literal["off", "no-loader", "active"]
    errors: tuple[str, ...] = ()
    env: JobEnvironment | None = None


@dataclass(frozen=True, slots=True)
class WatchRun:
    command: tuple[str, ...]
    pid: int
    interval: float
    started: str
    duration: float
    exit_code: int | None
    usable_cpus: int
    physical_cpus: int
    hook: HookStatus
    samples: tuple[Sample, ...]
    loaders: tuple[LoaderTotals, ...] = ()  # the final totals, read after the job exited
    fetches: tuple[FetchTotals, ...] = ()  # every process's batch production, read after the job exited
    gpu_note: str = ""
    sampler_cpu_s: float = 0.0  # CPU time envguard spent sampling
    spans: tuple[SpanStream, ...] = ()  # per-batch spans of every process, with --trace (not in --json)
