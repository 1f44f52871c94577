"""Determinism verdicts (pure): compare what the seeded DataLoader runs delivered.

Each run is a list of epochs; each epoch a list of observed samples (worker, identity, field digests) in
delivery order. The identity of a map-style sample is the index its sampler produced (`index:17`), never its
content, so per-sample augmentation cannot look like a change of order; content digests (the fields) answer
only "does the same index give the same sample". Run names: w0 / w0-repeat (num_workers=0), wN / wN-repeat /
wN-persistent (the most workers), w1 (one worker).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from envguard.findings import Finding
from envguard.smoke.measured import Observation, SeededRun, SeededRuns

CATEGORY = "determinism"
MIN_SHARED_POSITIONS = 4
Epoch = Sequence[Observation]
Runs = Mapping[str, SeededRun]

PARENT_RNG_FIX = (
    "create random generators inside each worker, e.g. in worker_init_fn: "
    "`self.rng = np.random.default_rng(torch.initial_seed() % 2**32)`, or draw from torch / np.random / "
    "random, which the DataLoader seeds per worker"
)


def _order(epoch: Epoch) -> list[str]:
    return [s.identity for s in epoch]


def _first_difference(a: Sequence[Any], b: Sequence[Any]) -> int:
    for position, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return position
    return min(len(a), len(b))


def _epoch(runs: Runs, name: str, index: int = 0) -> Epoch | None:
    run = runs.get(name)
    if run is None or len(run.epochs) <= index:
        return None
    return run.epochs[index]


def _differing_fields(a: Epoch, b: Epoch) -> list[str]:
    names: set[str] = set()
    for x, y in zip(a, b, strict=False):
        names.update(k for k in set(x.fields) | set(y.fields) if x.fields.get(k) != y.fields.get(k))
    return sorted(names)


def check_repeats(runs: Runs) -> list[Finding]:
    """Two identically seeded runs at the same num_workers must deliver the same order and the same draws."""
    findings: list[Finding] = []
    for first, second in (("w0", "w0-repeat"), ("wN", "wN-repeat")):
        a, b = _epoch(runs, first), _epoch(runs, second)
        if a is None or b is None:
            continue
        workers = runs[first].workers
        if _order(a) != _order(b):
            at = _first_difference(_order(a), _order(b))
            findings.append(
                Finding(
                    CATEGORY,
                    f"order repeats (num_workers={workers})",
                    "FAIL",
                    f"two runs seeded alike deliver different orders from sample {at} on",
                    "drive shuffling from the DataLoader's generator "
                    "(DataLoader(generator=torch.Generator().manual_seed(s)))"
                    " and do not shuffle inside the dataset or sampler with an unseeded RNG",
                )
            )
            continue
        fields = _differing_fields(a, b)
        if fields:
            findings.append(
                Finding(
                    CATEGORY,
                    f"draws repeat (num_workers={workers})",
                    "FAIL",
                    f"same order, but fields {', '.join(fields)} differ between two runs seeded alike",
                    "seed every generator the dataset uses from torch.initial_seed() (in worker_init_fn); "
                    "avoid "
                    "np.random.default_rng() without a seed, time- or os.urandom-based randomness",
                )
            )
        else:
            findings.append(
                Finding(
                    CATEGORY,
                    f"run repeats (num_workers={workers})",
                    "PASS",
                    f"order and every field of {len(a)} samples repeat (stream "
                    f"{runs[first].stream_digests[0][:12]})",
                )
            )
    return findings


def check_worker_counts(runs: Runs) -> list[Finding]:
    """The sample order must not depend on num_workers; per-sample draws may (reported as information)."""
    epochs = {runs[n].workers: _epoch(runs, n) for n in ("w0", "w1", "wN") if _epoch(runs, n) is not None}
    if len(epochs) < 2:
        return [
            Finding(
                CATEGORY,
                "order vs num_workers",
                "INFO",
                "not checked: only one worker count ran",
                "give --workers with 0 and at least 1",
            )
        ]
    base = epochs[min(epochs)]
    assert base is not None
    findings: list[Finding] = []
    for workers, epoch in sorted(epochs.items()):
        assert epoch is not None
        ids = _order(epoch)
        if len(set(ids)) < len(ids) and len(set(_order(base))) == len(base):
            findings.append(
                Finding(
                    CATEGORY,
                    "samples unique across workers",
                    "FAIL",
                    f"num_workers={workers} delivers {len(ids) - len(set(ids))} repeated samples of "
                    f"{len(ids)}",
                    "an IterableDataset must split its stream per worker: use "
                    "torch.utils.data.get_worker_info() "
                    "(id, num_workers) to give each worker its own shard",
                )
            )
    orders = {w: _order(e) for w, e in epochs.items() if e is not None}
    differing = [w for w, o in orders.items() if o != orders[min(orders)]]
    names = [n for n in ("w0", "w1", "wN") if n in runs]
    digests = ", ".join(f"{runs[n].workers}: {runs[n].order_digests[0][:12]}" for n in names)
    if differing:
        at = _first_difference(orders[min(orders)], orders[differing[0]])
        findings.append(
            Finding(
                CATEGORY,
                "order vs num_workers",
                "FAIL",
                f"order digests by num_workers {digests}; num_workers={differing[0]} diverges at sample {at}",
                "make the order come from the sampler alone: an IterableDataset interleaves its workers' "
                "shards, so "
                "its order changes with num_workers; shard by a fixed number of shards, not by worker count",
            )
        )
        return findings
    findings.append(
        Finding(CATEGORY, "order vs num_workers", "PASS", f"same order for num_workers {digests}")
    )
    draws = [w for w, e in epochs.items() if e is not None and _differing_fields(base, e)]
    if draws:
        findings.append(
            Finding(
                CATEGORY,
                "draws vs num_workers",
                "INFO",
                f"per-sample random draws differ between num_workers={min(epochs)} and {draws[0]} (worker i "
                "seeds from "
                "base_seed + i, batch k goes to worker k % N)",
                "a run reproduces exactly only at the same num_workers: record it with the run",
            )
        )
    return findings


def _per_worker(epoch: Epoch) -> dict[int, list[Mapping[str, str]]]:
    out: dict[int, list[Mapping[str, str]]] = {}
    for sample in epoch:
        out.setdefault(sample.worker, []).append(sample.fields)
    return out


def shared_streams(epoch: Epoch) -> list[tuple[int, int, str]]:
    """(worker a, worker b, field) where two workers produced the same values position by position."""
    workers = _per_worker(epoch)
    found: list[tuple[int, int, str]] = []
    for a, b in combinations(sorted(workers), 2):
        common = min(len(workers[a]), len(workers[b]))
        if common < MIN_SHARED_POSITIONS:
            continue
        for name in sorted(set(workers[a][0]) & set(workers[b][0])):
            values_a = [s.get(name) for s in workers[a][:common]]
            values_b = [s.get(name) for s in workers[b][:common]]
            if len(set(values_a)) > 1 and values_a == values_b:
                found.append((a, b, name))
    return found


def check_worker_draws(runs: Runs) -> list[Finding]:
    """No two workers may produce the same random draws (a generator copied from the parent into each
    worker)."""
    epoch = _epoch(runs, "wN")
    if epoch is None or runs["wN"].workers < 2:
        return [
            Finding(
                CATEGORY,
                "distinct worker draws",
                "INFO",
                "not checked: needs a run with 2 or more workers",
                "run where at least 2 CPUs are usable, or give --workers 0,2",
            )
        ]
    shared = shared_streams(epoch)
    if not shared:
        return [
            Finding(
                CATEGORY,
                "distinct worker draws",
                "PASS",
                f"{runs['wN'].workers} workers draw different values for every varying field",
            )
        ]
    fields = sorted({name for _a, _b, name in shared})
    pairs = sorted({(a, b) for a, b, _n in shared})
    global_only = all(name.startswith("global:") for name in fields)
    evidence = (
        f"workers {pairs[0][0]} and {pairs[0][1]} produce identical {', '.join(fields)} at every position"
    )
    if global_only:
        fix = (
            "the global generators are not re-seeded per worker (torch < 1.9 left NumPy alike in every "
            "worker): "
            "seed numpy/random in worker_init_fn from torch.initial_seed() % 2**32, or upgrade torch"
        )
    else:
        fix = (
            "a random generator created in the parent process is copied into every worker: " + PARENT_RNG_FIX
        )
    return [Finding(CATEGORY, "distinct worker draws", "FAIL", evidence, fix)]


def check_epochs(runs: Runs) -> list[Finding]:
    """Epoch 2 should differ from epoch 1; persistent_workers may change the order from epoch 2 (a
    finding)."""
    findings: list[Finding] = []
    first, second = _epoch(runs, "w0", 0), _epoch(runs, "w0", 1)
    if first is not None and second is not None:
        if _order(first) == _order(second):
            findings.append(
                Finding(
                    CATEGORY,
                    "epoch 2 differs from epoch 1",
                    "WARN",
                    "every epoch delivers the same order",
                    "shuffle each epoch: DataLoader(shuffle=True), call sampler.set_epoch(epoch) on a "
                    "DistributedSampler, "
                    "or reshuffle an IterableDataset's shards with a seed that includes the epoch",
                )
            )
        else:
            findings.append(
                Finding(CATEGORY, "epoch 2 differs from epoch 1", "PASS", "the order is reshuffled")
            )
    plain, persistent = _epoch(runs, "wN", 1), _epoch(runs, "wN-persistent", 1)
    if plain is not None and persistent is not None:
        workers = runs["wN"].workers
        if _order(plain) != _order(persistent):
            findings.append(
                Finding(
                    CATEGORY,
                    "persistent_workers and order",
                    "INFO",
                    f"with num_workers={workers}, persistent_workers=True changes the epoch-2 order "
                    "(base_seed is drawn "
                    "once, so later epochs use the generator differently)",
                    "keep persistent_workers the same in runs you compare; it is part of the reproducibility "
                    "recipe",
                )
            )
        else:
            findings.append(
                Finding(
                    CATEGORY,
                    "persistent_workers and order",
                    "PASS",
                    "persistent_workers=True leaves the epoch-2 order unchanged",
                )
            )
    return findings


def findings(record: SeededRuns | None) -> list[Finding]:
    """All determinism findings for the seeded runs the module made."""
    if record is None:
        return [
            Finding(
                CATEGORY,
                "determinism",
                "WARN",
                "the determinism runs did not run (see errors)",
                "rerun with a larger --budget",
            )
        ]
    runs = record.runs
    out = check_repeats(runs) + check_worker_counts(runs) + check_worker_draws(runs) + check_epochs(runs)
    if record.skipped:
        out.append(
            Finding(
                CATEGORY,
                "determinism runs",
                "WARN",
                f"skipped for lack of time: {', '.join(record.skipped)}",
                "give a larger --budget",
            )
        )
    return out
