"""Verdicts on the user's own loader as given (--loader, pure, issue 10): its order repeats across fresh
loaders and changes between epochs, identity by index through its collate_fn, `dataset.set_epoch(e)`
reaching its workers, and (--sweep) its rate per configuration against the one it was given with."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.pipeline import Setting
from envguard.smoke.advice import fastest, paired, spread_of
from envguard.smoke.measured_pipeline import IdentityEpoch, IdentityRecord, LoaderChecks
from envguard.smoke.rates import MIN_BATCH_MS
from envguard.smoke.report import DatasetResult, Recommendation, SweepRow
from envguard.smoke.verdicts.crashes import out_of_memory_text

CATEGORY = "your loader"
IDENTITY = "identity by index through your collate_fn"
SET_EPOCH = "set_epoch reaches the workers"
SHARD_FIX = (
    "make __getitem__(i) depend only on i (and the epoch): configure nothing per worker that changes which "
    "sample an index reads (no offsets from get_worker_info() in a map-style dataset); shard with a sampler "
    "(DistributedSampler) instead"
)
STALE_FIX = (
    "persistent workers keep the dataset copy they started with: keep the epoch in shared memory "
    "(self.epoch = torch.zeros(1, dtype=torch.int64).share_memory_() in __init__, self.epoch[0] = epoch in "
    "set_epoch) or a multiprocessing.Value made before the DataLoader, or take it from the sampler "
    "(DistributedSampler.set_epoch seeds the order in the main process); or persistent_workers=False"
)


def _where(record: IdentityRecord) -> str:
    return f"num_workers={record.num_workers}, collate_fn={record.collate_fn}"


SEEDED_FIX = (
    "give the DataLoader its own seeded generator: DataLoader(..., shuffle=True, "
    "generator=torch.Generator().manual_seed(SEED)) created inside the function (with workers, also "
    "worker_init_fn seeding numpy/random from torch.initial_seed() % 2**32)"
)


def own_loader(record: LoaderChecks | None) -> list[Finding]:
    """The user's loader as given: the order repeats across two runs; epoch 2 differs from epoch 1."""
    if record is None:
        return []
    category = CATEGORY
    if record.iterable:
        return [
            Finding(
                category,
                "order repeats across runs",
                "INFO",
                "an IterableDataset has no sampler: its "
                "stream's order is its own (check it with --dataset, which compares whole runs)",
            )
        ]
    used = record.settings
    run1, run2 = record.run1 or ((),), record.run2 or ((),)
    limit = len(run1[0])
    desc = (
        f"the first {limit} indices of two fresh loaders ({used.sampler}, num_workers="
        f"{used.num_workers}), the global torch RNG seeded differently before each (as when model "
        "init or another loader draws first)"
    )
    out: list[Finding] = []
    if run1[0] == run2[0]:
        out.append(Finding(category, "order repeats across runs", "PASS", f"{desc}: same order"))
    elif not used.generator:
        out.append(
            Finding(
                category,
                "order repeats across runs",
                "FAIL",
                f"{desc}: the order differs: shuffle "
                "without a seeded generator follows the global RNG (pytorch#11062)",
                SEEDED_FIX,
            )
        )
    else:
        out.append(
            Finding(
                category,
                "order repeats across runs",
                "FAIL",
                f"{desc}: the order differs although "
                "a generator is set: it is shared between calls or seeded from the global RNG",
                SEEDED_FIX,
            )
        )
    if len(run1) > 1:
        out.append(_epochs(category, run1, used))
    return out


def _epochs(category: str, run1: tuple[tuple[str, ...], ...], used: Setting) -> Finding:
    check = "epoch 2 differs from epoch 1"
    if run1[0] != run1[1]:
        return Finding(
            category, check, "PASS", f"the first {len(run1[0])} indices of epoch 2 differ from epoch 1"
        )
    if used.sampler == "SequentialSampler":
        return Finding(
            category, check, "INFO", "the loader is not shuffled: every epoch reads the same order"
        )
    return Finding(
        category,
        check,
        "WARN",
        f"epoch 2 repeats epoch 1's order ({used.sampler})",
        "a sampler that reseeds every epoch needs the epoch: call sampler.set_epoch(epoch) before each "
        "epoch (DistributedSampler), or seed its generator once, not per __iter__",
    )


def identity(record: IdentityRecord | None) -> list[Finding]:
    """Each delivered batch against the user's collate_fn over dataset[i] read in the main process."""
    if record is None or not record.epochs:
        return []
    return [_identity(record)] + ([_set_epoch(record)] if record.set_epoch else [])


def _explained(record: IdentityRecord, row: IdentityEpoch) -> bool:
    """Batches of a later epoch that a stale set_epoch explains (judged by the set_epoch check instead)."""
    return record.set_epoch and record.persistent_workers and row.epoch > 0 and bool(row.stale)


def _identity(record: IdentityRecord) -> Finding:
    rows = record.epochs
    total = sum(r.batches for r in rows)
    randoms = sum(r.random for r in rows)
    differ = [b for r in rows if not _explained(record, r) for b in r.differ]
    desc = f"{total} batches of {len(rows)} epochs from your loader ({_where(record)})"
    if differ:
        example = ", ".join(differ[0][:8])
        return Finding(
            CATEGORY,
            IDENTITY,
            "FAIL",
            f"{desc}: {len(differ)} differ from collate_fn([dataset[i] ...]) over the same indices read in "
            f"the main process (e.g. indices {example}): the sample an index reads depends on the process "
            "that reads it (state set per worker in worker_init_fn or on first use)",
            SHARD_FIX,
        )
    if randoms == total:
        return Finding(
            CATEGORY,
            IDENTITY,
            "INFO",
            f"{desc}: the same indices give other content on every read (random augmentation from the "
            "global RNG, or state that changes per read), so identity by index is not judged by content",
        )
    judged = total - randoms
    extra = f" ({randoms} random batches not judged)" if randoms else ""
    return Finding(
        CATEGORY,
        IDENTITY,
        "PASS",
        f"{desc}: the {judged} judged batches equal collate_fn([dataset[i] ...]) over the same indices read "
        f"in the main process{extra}",
    )


def _set_epoch(record: IdentityRecord) -> Finding:
    later = record.epochs[1:]
    workers, persistent = record.num_workers, record.persistent_workers
    judged = sum(r.batches - r.random for r in later)
    stale = sum(r.stale for r in later)
    mode = "persistent_workers=True" if persistent else "workers start afresh each epoch"
    if stale and persistent:
        return Finding(
            CATEGORY,
            SET_EPOCH,
            "FAIL",
            f"dataset.set_epoch(1) was called before epoch 2, as a training loop does, but {stale} of "
            f"{judged} batches of epoch 2 from your {workers} persistent workers equal what the dataset "
            "gives at epoch 0 (read in the main process): the workers never see the new epoch "
            "(pytorch#97326, huggingface/datasets#6673)",
            STALE_FIX,
        )
    if not judged:
        return Finding(
            CATEGORY,
            SET_EPOCH,
            "INFO",
            "epoch 2's batches change on every read, so whether set_epoch reached the workers is not judged",
        )
    if workers == 0:
        evidence = "num_workers=0: the training loop's own process reads, so set_epoch always reaches it"
    else:
        evidence = (
            f"dataset.set_epoch(1) before epoch 2 ({workers} workers, {mode}): epoch 2's {judged} judged "
            "batches equal the dataset at epoch 1 read in the main process"
        )
    return Finding(CATEGORY, SET_EPOCH, "PASS", evidence)


# -- --sweep: the user's own loader timed per configuration
# ---------------------------------------------------------------------------------------------------------
FASTER = 1.2  # another configuration must beat the loader as given by this much to be recommended


def _given(given: Setting | None) -> str:
    workers = given.num_workers if given else None
    prefetch = f", prefetch_factor={given.prefetch_factor}" if given and workers else ""
    return f"num_workers={workers}{prefetch}"


def sweep(dataset: DatasetResult, rec: Recommendation | None, given: Setting | None) -> list[Finding]:
    """The rate of each configuration (bounded efficiency where an ideal exists) and whether another one
    beats the loader as given."""
    category, check = f"throughput: {dataset.name}", "your loader's rate per configuration"
    if dataset.error:  # running out of memory is named once, by crashes.out_of_memory
        if out_of_memory_text(dataset.error):
            return []
        return [Finding(category, check, "WARN", f"the sweep of your loader crashed: {dataset.error}")]
    measured = [r for r in dataset.measured() if not r.persistent_workers]
    if rec is None or not measured:
        return [
            Finding(
                category,
                check,
                "WARN",
                "no configuration could be measured in the budget",
                "give a larger --budget",
            )
        ]
    if dataset.latency_ms:
        basis = f"efficiency vs the ideal N/L from the per-sample cost L={dataset.latency_ms:g} ms"
    else:
        basis = (
            "no ideal claimed: a batch's samples take under "
            f"{MIN_BATCH_MS:g} ms, so collate_fn/IPC overhead, not the per-sample cost, sets the rate"
        )
    listed = ", ".join(
        f"N={r.workers}: {r.samples_per_s:.0f}/s"
        + (f" = {r.efficiency:.2f}" if r.efficiency is not None else "")
        for r in measured
    )
    wrong = [f"N={r.workers}" for r in dataset.rows if r.unreliable and not r.samples_per_s]
    doubt = [f"N={r.workers}" for r in dataset.rows if r.unreliable and r.samples_per_s]
    notes = f"; not used (above the physical limit): {', '.join(wrong)}" if wrong else ""
    if doubt:
        notes += f"; no efficiency for {', '.join(doubt)} (faster than the per-sample profile's ideal)"
    out = [
        Finding(
            category,
            check,
            "INFO",
            f"samples/s as given but for the swept arguments ({basis}): {listed}{notes}",
        )
    ]
    mine = [r for r in measured if given and r.workers == given.num_workers]
    top = fastest(dataset)
    if mine and top is not None and top.samples_per_s and mine[0].samples_per_s:
        out.append(_as_given(category, given, mine[0], top, rec))
    return out


def _as_given(
    category: str, given: Setting | None, mine: SweepRow, top: SweepRow, rec: Recommendation
) -> Finding:
    """The loader as given against the FASTEST configuration measured (never against the recommended one,
    which may itself be the slower of two rows a measurement could not tell apart)."""
    rate, best = mine.samples_per_s or 0.0, top.samples_per_s or 0.0
    ratio = best / rate if rate else float("inf")
    check = "your loader's configuration"
    if mine.pass_rates and rec.rule in ("measured", "inconclusive"):
        return _as_given_interleaved(category, given, mine, top, rec)
    separated = rate * (1 + spread_of(mine)) < best * (1 - spread_of(top))
    backed = rec.rule == "model" and rec.workers != mine.workers  # the model chose it among overlapping rows
    if top.workers != mine.workers and ratio >= FASTER and (separated or backed):
        return Finding(
            category,
            check,
            "WARN",
            f"as given ({_given(given)}) it delivers {rate:.0f} samples/s; the fastest configuration "
            f"measured, num_workers={top.workers}, delivers {best:.0f} ({ratio:.1f}x)",
            f"{rec.dataloader or f'DataLoader(..., num_workers={rec.workers})'}: {rec.reason}",
        )
    if top.workers != mine.workers and ratio >= FASTER:
        return Finding(
            category,
            check,
            "INFO",
            f"as given ({_given(given)}) it delivers {rate:.0f} samples/s and num_workers={top.workers} "
            f"{best:.0f} ({ratio:.1f}x), but their intervals overlap (±{spread_of(mine):.0%}, "
            f"±{spread_of(top):.0%}): inconclusive",
            "rerun with a larger --budget (more rounds per configuration) or on a quieter machine",
        )
    return Finding(
        category,
        check,
        "PASS",
        f"as given ({_given(given)}) it delivers {rate:.0f} samples/s, within {FASTER:.1f}x of the fastest "
        f"configuration measured (num_workers={top.workers}: {best:.0f})",
    )


def _as_given_interleaved(
    category: str, given: Setting | None, mine: SweepRow, top: SweepRow, rec: Recommendation
) -> Finding:
    """The loader as given against the recommendation of an interleaved sweep, pass by pass: WARN where the
    recommended setting surely beats it by FASTER, INFO where it is faster but by less (or fewer workers do
    as well), PASS where the loader as given is the recommendation."""
    check = "your loader's configuration"
    rate = mine.samples_per_s or 0.0
    if rec.workers == mine.workers:
        return Finding(
            category,
            check,
            "PASS",
            f"as given ({_given(given)}) it delivers {rate:.0f} samples/s: the recommended setting "
            f"(fastest measured: num_workers={top.workers}, {top.samples_per_s or 0.0:.0f})",
        )
    chosen = next((r for r in (top, mine) if r.workers == rec.workers), None) or top
    ratio = paired(chosen, mine) if chosen is not mine else None
    fix = f"{rec.dataloader or f'DataLoader(..., num_workers={rec.workers})'}: {rec.reason}"
    if ratio is not None and ratio.low >= FASTER:
        return Finding(
            category,
            check,
            "WARN",
            f"as given ({_given(given)}) it delivers {rate:.0f} samples/s; num_workers={rec.workers} is "
            f"{ratio.text()} faster",
            fix,
        )
    how = f"{ratio.text()} of it" if ratio is not None else f"{rec.samples_per_s:.0f} samples/s"
    return Finding(
        category,
        check,
        "INFO",
        f"as given ({_given(given)}) it delivers {rate:.0f} samples/s; num_workers={rec.workers}: {how}",
        fix,
    )
