"""The smoke wire's records of the user's own pipeline (--dataset / --loader, issue 10), shown as measured:
start-method safety, the loader as given (its runs, identity by index), per-worker memory, start-up per
start method and fresh interpreters (PYTHONHASHSEED). msgspec Structs, decoded with `measured.Measured`."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from envguard.pipeline import Setting


class Record(msgspec.Struct, frozen=True):
    """A record of the smoke wire: immutable; keys the module prints that no field names are ignored."""


class Unpicklable(Record, frozen=True):
    """What a spawn/forkserver worker would receive that does not pickle, and the fix for its kind."""

    name: str
    kind: str
    type: str
    fix: str
    error: str


class StartMethodSafety(Record, frozen=True):
    method: str
    checked: tuple[str, ...] = ()
    problems: tuple[Unpicklable, ...] = ()


class IdentityEpoch(Record, frozen=True):
    """One epoch through the user's loader: batches delivered, those random on every read, those that differ
    from collate_fn over the same indices read in the main process (their indices), and those equal to the
    dataset at epoch 0 (a set_epoch that never reached the workers)."""

    epoch: int
    batches: int
    random: int
    differ: tuple[tuple[str, ...], ...]
    stale: int


class IdentityRecord(Record, frozen=True):
    num_workers: int
    persistent_workers: bool = False
    collate_fn: str | None = None
    set_epoch: bool = False
    epochs: tuple[IdentityEpoch, ...] = ()


class LoaderChecks(Record, frozen=True):
    """Two fresh runs of the user's loader (the global RNG seeded differently before each): the first
    `limit` indices of each epoch; nothing but the settings for an IterableDataset (no sampler)."""

    settings: Setting
    limit: int
    iterable: bool = False
    run1: tuple[tuple[str, ...], ...] = ()
    run2: tuple[tuple[str, ...], ...] = ()
    first_batch_s: float | None = None
    identity: IdentityRecord | None = None


class ProcessMemory(Record, frozen=True):
    """A process's unique and proportional set size, bytes."""

    uss: int
    pss: int


class Culprit(Record, frozen=True):
    """A large Python list/dict of objects on the dataset: the likely copy-on-read."""

    name: str
    container: str
    length: int
    items: tuple[str, ...] = ()


class WorkerMemory(Record, frozen=True):
    """Each fork worker's memory after its first batches (`start`) and after reading `indices` random indices
    (`end`), by pid; the parent's alongside."""

    workers: int
    indices: int
    length: int
    sample_bytes: int
    start_after: int
    parent: ProcessMemory | None = None
    culprits: tuple[Culprit, ...] = ()
    start: Mapping[str, ProcessMemory | None] = msgspec.field(default_factory=dict)
    parent_start: ProcessMemory | None = None
    end: Mapping[str, ProcessMemory | None] = msgspec.field(default_factory=dict)
    parent_end: ProcessMemory | None = None


class StartupTimes(Record, frozen=True):
    """Seconds from iter(loader) to the first batch per start method (the one in use first)."""

    in_use: str
    workers: int
    seconds: Mapping[str, float] = msgspec.field(default_factory=dict)
    unpicklable: bool = False
    persistent_workers: bool = False


class InterpreterRead(Record, frozen=True):
    """The first samples read in one fresh interpreter: the index order and each index's field digests, or
    why they could not be read."""

    order: tuple[str, ...] | None = None
    samples: Mapping[str, Mapping[str, str]] | None = None
    error: str | None = None


class CrossProcess(Record, frozen=True):
    """Fresh interpreters that differ only in PYTHONHASHSEED (`seeds`), and a control with the first seed
    again when they disagree."""

    limit: int
    seconds: float
    seeds: tuple[str, ...] = ()
    runs: Mapping[str, InterpreterRead] = msgspec.field(default_factory=dict)
    control: str | None = None


class SkippedCheck(Record, frozen=True):
    """A pipeline check the time left could not fit."""

    phase: str
    needs_s: float
    left_s: float | None = None
