"""What the in-environment module measured of the user's own pipeline (--dataset / --loader, issue 10), as
frozen records the report shows as measured: start-method safety, the loader as given (its runs, identity by
index), per-worker memory, start-up per start method and fresh interpreters (PYTHONHASHSEED)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Unpicklable:
    """What a spawn/forkserver worker would receive that does not pickle, and the fix for its kind."""

    name: str
    kind: str
    type: str
    fix: str
    error: str


@dataclass(frozen=True, slots=True)
class StartMethodSafety:
    method: str
    checked: tuple[str, ...]
    problems: tuple[Unpicklable, ...]


@dataclass(frozen=True, slots=True)
class LoaderSettings:
    """The user's DataLoader as given."""

    num_workers: int
    batch_size: int | None
    sampler: str | None
    generator: bool
    persistent_workers: bool
    prefetch_factor: int | None
    worker_init_fn: str | None
    collate_fn: str | None
    pin_memory: bool = False


@dataclass(frozen=True, slots=True)
class IdentityEpoch:
    """One epoch through the user's loader: batches delivered, those random on every read, those that differ
    from collate_fn over the same indices read in the main process (their indices), and those equal to the
    dataset at epoch 0 (a set_epoch that never reached the workers)."""

    epoch: int
    batches: int
    random: int
    differ: tuple[tuple[str, ...], ...]
    stale: int


@dataclass(frozen=True, slots=True)
class IdentityRecord:
    num_workers: int
    persistent_workers: bool
    collate_fn: str | None
    set_epoch: bool
    epochs: tuple[IdentityEpoch, ...]


@dataclass(frozen=True, slots=True)
class LoaderChecks:
    """Two fresh runs of the user's loader (the global RNG seeded differently before each): the first
    `limit` indices of each epoch; nothing but the settings for an IterableDataset (no sampler)."""

    settings: LoaderSettings
    limit: int
    iterable: bool = False
    run1: tuple[tuple[str, ...], ...] = ()
    run2: tuple[tuple[str, ...], ...] = ()
    first_batch_s: float | None = None
    identity: IdentityRecord | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """A process's unique and proportional set size, bytes."""

    uss: int
    pss: int


@dataclass(frozen=True, slots=True)
class Culprit:
    """A large Python list/dict of objects on the dataset: the likely copy-on-read."""

    name: str
    container: str
    length: int
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WorkerMemory:
    """Each fork worker's memory after its first batches (`start`) and after reading `indices` random indices
    (`end`), by pid; the parent's alongside."""

    workers: int
    indices: int
    length: int
    parent: Usage | None
    culprits: tuple[Culprit, ...]
    sample_bytes: int
    start: Mapping[str, Usage | None]
    parent_start: Usage | None
    start_after: int
    end: Mapping[str, Usage | None]
    parent_end: Usage | None


@dataclass(frozen=True, slots=True)
class StartupTimes:
    """Seconds from iter(loader) to the first batch per start method (the one in use first)."""

    in_use: str
    seconds: Mapping[str, float]
    unpicklable: bool
    workers: int
    persistent_workers: bool


@dataclass(frozen=True, slots=True)
class InterpreterRead:
    """The first samples read in one fresh interpreter: the index order and each index's field digests, or
    why they could not be read."""

    order: tuple[str, ...] | None = None
    samples: Mapping[str, Mapping[str, str]] | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class CrossProcess:
    """Fresh interpreters that differ only in PYTHONHASHSEED (`seeds`), and a control with the first seed
    again when they disagree."""

    seeds: tuple[str, ...]
    limit: int
    runs: Mapping[str, InterpreterRead]
    control: str | None
    seconds: float


@dataclass(frozen=True, slots=True)
class SkippedCheck:
    """A pipeline check the time left could not fit."""

    phase: str
    needs_s: float
    left_s: float | None
