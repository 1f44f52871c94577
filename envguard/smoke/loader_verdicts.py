"""Verdicts on the user's own loader as given (pure, over the in-environment identity record): identity by
index through its collate_fn, and `dataset.set_epoch(e)` reaching its workers (issue 10)."""

from __future__ import annotations

from typing import Any

from envguard.findings import Finding
from envguard.smoke.report import DatasetResult, Recommendation

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


def _rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    return list(record.get("epochs") or ())


def _where(record: dict[str, Any]) -> str:
    return f"num_workers={record.get('num_workers')}, collate_fn={record.get('collate_fn')}"


def identity(record: dict[str, Any] | None) -> list[Finding]:
    """Each delivered batch against the user's collate_fn over dataset[i] read in the main process."""
    if not record or not _rows(record):
        return []
    return [_identity(record)] + ([_set_epoch(record)] if record.get("set_epoch") else [])


def _identity(record: dict[str, Any]) -> Finding:
    rows = _rows(record)
    total = sum(int(r["batches"]) for r in rows)
    randoms = sum(int(r["random"]) for r in rows)
    stale_epochs = record.get("set_epoch") and record.get("persistent_workers")
    # batches of later epochs that a stale set_epoch explains are judged by the set_epoch check instead
    differ = [b for r in rows if not (stale_epochs and r["epoch"] > 0 and r["stale"]) for b in r["differ"]]
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


def _set_epoch(record: dict[str, Any]) -> Finding:
    later = _rows(record)[1:]
    workers = int(record.get("num_workers") or 0)
    persistent = bool(record.get("persistent_workers"))
    judged = sum(int(r["batches"]) - int(r["random"]) for r in later)
    stale = sum(int(r["stale"]) for r in later)
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
SWEPT = "your loader"  # the in-environment sweep's entry names start so
MIN_BATCH_MS = 20.0  # below this much per-sample time per batch, collate/IPC overhead sets the rate
FASTER = 1.2  # another configuration must beat the loader as given by this much to be recommended


def claimable(entry: dict[str, Any]) -> dict[str, Any]:
    """The sweep entry with its ideal withdrawn when the per-sample cost cannot bound the rate: a batch's
    samples take under MIN_BATCH_MS, so the per-batch overhead (collate_fn, IPC) dominates. Other entries
    pass unchanged."""
    if not str(entry.get("name", "")).startswith(SWEPT):
        return entry
    profile = dict(entry.get("profile") or {})
    sizes = [int(r.get("batch_size") or 0) for r in entry.get("rows") or ()]
    per_batch = float(profile.get("wall_ms") or 0.0) * max(sizes or [1])
    if per_batch >= MIN_BATCH_MS:
        return entry
    profile.update(wall_ms=None, cpu_ms=None, per_batch_ms=round(per_batch, 3))
    return dict(entry, profile=profile)


def _given(given: dict[str, Any]) -> str:
    workers = given.get("num_workers")
    prefetch = f", prefetch_factor={given.get('prefetch_factor')}" if workers else ""
    return f"num_workers={workers}{prefetch}"


def sweep(dataset: DatasetResult, rec: Recommendation | None, given: dict[str, Any]) -> list[Finding]:
    """The rate of each configuration (bounded efficiency where an ideal exists) and whether another one
    beats the loader as given."""
    category, check = f"throughput: {dataset.name}", "your loader's rate per configuration"
    if dataset.error:
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
    wrong = [f"N={r.workers}" for r in dataset.rows if r.unreliable]
    notes = f"; not used (above the physical limit): {', '.join(wrong)}" if wrong else ""
    out = [
        Finding(
            category,
            check,
            "INFO",
            f"samples/s as given but for the swept arguments ({basis}): {listed}{notes}",
        )
    ]
    mine = [r for r in measured if r.workers == given.get("num_workers")]
    if mine and rec.samples_per_s and mine[0].samples_per_s:
        ratio = rec.samples_per_s / mine[0].samples_per_s
        if rec.workers != mine[0].workers and ratio >= FASTER:
            out.append(
                Finding(
                    category,
                    "your loader's configuration",
                    "WARN",
                    f"as given ({_given(given)}) it delivers {mine[0].samples_per_s:.0f} samples/s; "
                    f"num_workers={rec.workers} delivers {rec.samples_per_s:.0f} ({ratio:.1f}x)",
                    f"DataLoader(..., num_workers={rec.workers})",
                )
            )
        else:
            out.append(
                Finding(
                    category,
                    "your loader's configuration",
                    "PASS",
                    f"as given ({_given(given)}) it delivers {mine[0].samples_per_s:.0f} samples/s, "
                    f"within {FASTER:.1f}x of the fastest configuration measured",
                )
            )
    return out
