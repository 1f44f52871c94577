"""The user's pipeline in the in-environment module's JSON (--dataset / --loader) -> `measured_pipeline`
records: `wire.parse` reads these sections with them."""

from __future__ import annotations

from envguard.smoke.measured_pipeline import (
    CrossProcess,
    Culprit,
    IdentityEpoch,
    IdentityRecord,
    InterpreterRead,
    LoaderChecks,
    LoaderSettings,
    SkippedCheck,
    StartMethodSafety,
    StartupTimes,
    Unpicklable,
    Usage,
    WorkerMemory,
)
from envguard.smoke.typedjson import Obj


def _unpicklable(problem: Obj) -> Unpicklable:
    return Unpicklable(
        name=problem.text("name"),
        kind=problem.text("kind"),
        type=problem.text("type"),
        fix=problem.text("fix"),
        error=problem.text("error"),
    )


def start_method_safety(record: Obj) -> StartMethodSafety:
    return StartMethodSafety(
        method=record.text("method"),
        checked=record.texts("checked"),
        problems=record.each("problems", _unpicklable),
    )


def _loader_settings(given: Obj) -> LoaderSettings:
    return LoaderSettings(
        num_workers=given.integer("num_workers"),
        batch_size=given.opt_integer("batch_size"),
        sampler=given.opt_text("sampler"),
        generator=given.flag("generator"),
        persistent_workers=given.flag("persistent_workers"),
        prefetch_factor=given.opt_integer("prefetch_factor"),
        worker_init_fn=given.opt_text("worker_init_fn"),
        collate_fn=given.opt_text("collate_fn"),
        pin_memory=given.flag("pin_memory"),
    )


def _identity_epoch(row: Obj) -> IdentityEpoch:
    return IdentityEpoch(
        epoch=row.integer("epoch"),
        batches=row.integer("batches"),
        random=row.integer("random"),
        differ=row.nested_texts("differ"),
        stale=row.integer("stale"),
    )


def _identity(record: Obj) -> IdentityRecord:
    return IdentityRecord(
        num_workers=record.integer("num_workers"),
        persistent_workers=record.flag("persistent_workers"),
        collate_fn=record.opt_text("collate_fn"),
        set_epoch=record.flag("set_epoch"),
        epochs=record.each("epochs", _identity_epoch),
    )


def loader_checks(record: Obj) -> LoaderChecks:
    settings, limit = _loader_settings(record.obj("settings")), record.integer("limit")
    if record.flag("iterable"):
        return LoaderChecks(settings=settings, limit=limit, iterable=True)
    return LoaderChecks(
        settings=settings,
        limit=limit,
        run1=record.nested_texts("run1"),
        run2=record.nested_texts("run2"),
        first_batch_s=record.opt_number("first_batch_s"),
        identity=record.optional("identity", _identity),
    )


def _usage(parent: Obj, key: str) -> Usage | None:
    found = parent.opt_obj(key)
    return None if found is None else Usage(uss=found.integer("uss"), pss=found.integer("pss"))


def _culprit(found: Obj) -> Culprit:
    return Culprit(
        name=found.text("name"),
        container=found.text("container"),
        length=found.integer("length"),
        items=found.texts("items"),
    )


def worker_memory(record: Obj) -> WorkerMemory:
    return WorkerMemory(
        workers=record.integer("workers"),
        indices=record.integer("indices"),
        length=record.integer("length"),
        parent=_usage(record, "parent"),
        culprits=record.each("culprits", _culprit),
        sample_bytes=record.integer("sample_bytes"),
        start=record.mapping("start", _usage),
        parent_start=_usage(record, "parent_start"),
        start_after=record.integer("start_after"),
        end=record.mapping("end", _usage),
        parent_end=_usage(record, "parent_end"),
    )


def startup_times(record: Obj) -> StartupTimes:
    return StartupTimes(
        in_use=record.text("in_use"),
        seconds=record.number_map("seconds"),
        unpicklable=record.flag("unpicklable"),
        workers=record.integer("workers"),
        persistent_workers=record.flag("persistent_workers"),
    )


def _interpreter(runs: Obj, seed: str) -> InterpreterRead:
    run = runs.obj(seed)
    if run.printed("error"):
        return InterpreterRead(error=run.text("error"))
    return InterpreterRead(
        order=run.texts("order"), samples=run.mapping("samples", lambda inner, index: inner.text_map(index))
    )


def cross_process(record: Obj) -> CrossProcess:
    return CrossProcess(
        seeds=record.texts("seeds"),
        limit=record.integer("limit"),
        runs=record.mapping("runs", _interpreter),
        control=record.opt_text("control"),
        seconds=record.number("seconds"),
    )


def skipped_check(check: Obj) -> SkippedCheck:
    return SkippedCheck(
        phase=check.text("phase"), needs_s=check.number("needs_s"), left_s=check.opt_number("left_s")
    )
