"""What an input pipeline costs per batch and the cores it runs on, as smoke, watch and doctor measure them
(frozen records; the model in model.py reads only these).

Clocks: a wall time holds CPU time, time waiting off the CPU (sleep, I/O: what more workers overlap) and time
waiting for a CPU (run queue: what a busy machine adds). The tools measure CPU time beside wall time and the
run-queue delay (/proc/thread-self/schedstat) where they can, so the off-CPU wait survives a busy machine.
"""

from __future__ import annotations

from dataclasses import dataclass

RECEIVE_S = 0.001  # the main process's CPU per batch a worker hands over (IPC, unpickling) when not measured


@dataclass(frozen=True, slots=True)
class BatchCosts:
    """Seconds per batch. `load_*`: producing one batch (fetch + collate) in one process with one intra-op
    thread, as a worker does; `load_wait`: the part of it spent off the CPU (sleep, I/O), which a busy machine
    does not change. `step_*`: the training loop's work between two batches in the main process (all its
    threads: `step_cpu / step_wall` is how many cores the step keeps busy). `receive_cpu`: the main process's
    own CPU per batch handed over by workers (unpickling, IPC). `transfer`: the host-to-device copy.
    `load_delay`: the run-queue wait while loading, kept apart from `load_wait` so a busy machine never makes
    CPU-bound loading look like I/O. `step_delay`: the main thread's run-queue wait in the step (a threaded
    step on a busy host wants cores it does not get: little CPU, much waiting for a core)."""

    load_cpu: float
    load_wait: float
    step_wall: float
    step_cpu: float = 0.0
    receive_cpu: float = 0.0
    transfer: float = 0.0
    load_delay: float = 0.0  # waiting for a core while loading (run queue): the machine's load, as measured
    step_delay: float = 0.0

    @property
    def load_wall(self) -> float:
        """One batch's loading as a worker sees it on this machine now: CPU, the off-CPU waits, and the
        run-queue wait the other load adds (each worker waits on its own, so more workers overlap it too)."""
        return self.load_cpu + self.load_wait + self.load_delay

    @property
    def step_cores(self) -> float:
        """Cores the training step keeps busy while it runs (its intra-op threads)."""
        return self.step_cpu / self.step_wall if self.step_wall > 0 else 0.0

    @property
    def step_wants(self) -> float:
        """Cores the step wants: those it kept busy plus the share of its time its main thread waited for one
        (a step that sleeps or waits on a GPU wants ~0; a CPU step starved on a busy host still wants one)."""
        return self.step_cores + (self.step_delay / self.step_wall if self.step_wall > 0 else 0.0)


@dataclass(frozen=True, slots=True)
class Cores:
    """The cores the job may use (affinity and the cgroup quota) and the other load seen meanwhile: `others`
    is how many runnable processes outside the job compete for them (about the cores they kept busy; more
    on a saturated machine, see `others_from_share`)."""

    usable: int
    others: float = 0.0


def others_from_share(
    usable: int, others_cores: float, share: float | None, runnable: float, visible: int | None = None
) -> float:
    """The other load as runnable processes competing for the job's cores. The cores others kept busy
    (measured over the `visible` cores of the host, default the usable ones) count while cores are free, less
    the host's cores the job cannot use anyway (a 2-CPU quota on an 8-core host: others take 6 before they
    take the job's share); once they are full, the scheduler gives each runnable process usable / (ours +
    theirs), so the share of a core a busy process of ours got while runnable (CPU / (CPU + run-queue wait))
    tells how many of theirs there were."""
    spare = max(0, (visible or usable) - usable)
    others = max(others_cores - spare, 0.0)
    if share is None or share >= 0.95 or share <= 0:
        return others
    return max(others, usable / share - max(runnable, 1.0))


@dataclass(frozen=True, slots=True)
class Setting:
    """A DataLoader's settings, the one type smoke, watch and doctor share: the four arguments the advice
    covers (prefetch_factor None without workers) and, where they were read off a real loader (smoke's
    --loader, watch's hook), how it batches and samples and what it loads (None: not set or not readable).
    Both wires decode it as is (the smoke module's `settings`, the hook's)."""

    num_workers: int = 0
    prefetch_factor: int | None = None
    persistent_workers: bool = False
    pin_memory: bool = False
    batch_size: int | None = None
    sampler: str | None = None
    generator: bool = False
    worker_init_fn: str | None = None
    collate_fn: str | None = None
    dataset: str | None = None  # the dataset's type name
    threads: int | None = None  # the loop's intra-op threads (torch.get_num_threads()) as the epoch begins

    @property
    def workers(self) -> int:
        """Worker processes (0: loading in the main process)."""
        return self.num_workers or 0

    def call(self) -> str:
        """`num_workers=2, prefetch_factor=2, persistent_workers=True` as it goes into DataLoader(...)."""
        parts = [f"num_workers={self.num_workers}"]
        if self.num_workers:
            parts.append(f"prefetch_factor={self.prefetch_factor or 2}")
            parts.append(f"persistent_workers={self.persistent_workers}")
        parts.append(f"pin_memory={self.pin_memory}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Pipeline:
    """One pipeline as measured: its costs, cores, the setting it ran with and the rate measured there
    (batches/s; None where nothing ran it, e.g. doctor), whether an accelerator consumes the batches, the
    workers' start-up per epoch under the start method in use, the batches per epoch, the per-batch
    loading time's p95 over its median (burstiness) and the step's intra-op threads
    (torch.get_num_threads() in the training process), where measured; the loop's data-wait share and how
    far the measured rate could be off from its variance over the run."""

    costs: BatchCosts
    cores: Cores
    current: Setting
    measured_rate: float | None = None
    accelerator: bool = False
    startup_s: float | None = None
    epoch_batches: int | None = None
    burstiness: float | None = None
    step_threads: int | None = None
    data_wait: float | None = None  # the share of the loop spent waiting for data, where a loop was measured
    spread: float | None = None  # the measured rate's relative uncertainty (about 2 standard errors)
