"""Verdicts on the user's input pipeline (pure, over the in-environment records): start-method safety, order
and content across interpreter processes, and the user's own DataLoader (issue 10)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from envguard.findings import Finding
from envguard.smoke import loader_verdicts

SPAWN_NOTE = "spawn is the default on macOS and Windows, forkserver on Linux from Python 3.14"


def start_method(record: dict[str, Any] | None) -> list[Finding]:
    """FAIL under spawn/forkserver when what workers receive does not pickle; WARN under fork (it works
    today)."""
    if not record:
        return []
    category, check = "start method", "workers can start under spawn/forkserver"
    method = str(record.get("method") or "fork")
    problems = record.get("problems") or []
    checked = ", ".join(record.get("checked") or ()) or "nothing"
    if not problems:
        return [
            Finding(
                category,
                check,
                "PASS",
                f"{checked} pickle with multiprocessing's ForkingPickler (start method {method})",
            )
        ]
    named = "; ".join(f"{p['name']} ({p['error']})" for p in problems)
    fixes = " | ".join(dict.fromkeys(str(p["fix"]) for p in problems))
    if method == "fork":
        return [
            Finding(
                category,
                check,
                "WARN",
                f"works under fork, but would fail under spawn ({SPAWN_NOTE}): {named} cannot be pickled",
                fixes,
            )
        ]
    return [
        Finding(
            category,
            check,
            "FAIL",
            f"DataLoader workers cannot start under {method}: {named} cannot be "
            "pickled; the dataset phases were skipped",
            fixes,
        )
    ]


SLOW_SPAWN_S = 1.0  # start-up a spawn/forkserver loader pays per epoch worth naming persistent_workers for


def startup(record: dict[str, Any] | None) -> list[Finding]:
    """Worker start-up (iter() to the first batch) per start method measured; under fork, what spawn costs."""
    seconds = (record or {}).get("seconds") or {}
    if not record or not seconds:
        return []
    in_use = str(record.get("in_use"))
    persistent = bool(record.get("persistent_workers"))
    listed = ", ".join(
        f"{method}{' (in use)' if method == in_use else ''} {value:.2f} s"
        for method, value in seconds.items()
    )
    workers = int(record.get("workers") or 0)
    evidence = f"first batch with {workers} worker{'' if workers == 1 else 's'}: {listed}"
    slow = 0.0
    if in_use == "fork" and "spawn" in seconds:
        slow = float(seconds["spawn"])
        evidence += (
            "; under spawn (the default on macOS and Windows; forkserver, Linux's default from Python 3.14, "
            f"starts alike) each start of the workers costs "
            f"{seconds['spawn'] - seconds['fork']:.2f} s more, "
            + ("once (persistent_workers=True)" if persistent else "every epoch (persistent_workers=False)")
        )
    elif in_use == "fork" and record.get("unpicklable"):
        evidence += "; spawn not measured: the dataset cannot be pickled for it (see the check above)"
    else:
        slow = float(seconds.get(in_use) or 0.0)
    fix = ""
    if slow >= SLOW_SPAWN_S and not persistent:
        fix = "persistent_workers=True pays the spawn/forkserver start-up once instead of every epoch"
    return [Finding("start method", "worker start-up per start method", "INFO", evidence, fix)]


def _fields_changed(first: dict[str, Any], second: dict[str, Any]) -> tuple[int, int, list[str]]:
    """(indices holding another sample: every field differs, indices where only some fields differ, those
    fields) between two interpreters' samples."""
    moved, changed, names = 0, 0, Counter[str]()
    for index, digests in first.items():
        other = second.get(index) or {}
        differs = [name for name in digests if digests[name] != other.get(name)]
        if differs and len(differs) == len(digests):
            moved += 1
        elif differs:
            changed += 1
            names.update(differs)
    return moved, changed, [name for name, _ in names.most_common()]


def cross_process(record: dict[str, Any] | None) -> list[Finding]:
    """Same order and per-index content in interpreters that differ only in PYTHONHASHSEED."""
    if not record:
        return []
    category, check = "determinism", "same samples across interpreter processes"
    seeds = record.get("seeds") or ["1", "2"]
    runs = record.get("runs") or {}
    first, second = runs.get(seeds[0]) or {}, runs.get(seeds[1]) or {}
    errors = [f"PYTHONHASHSEED={s}: {r['error']}" for s, r in runs.items() if "error" in r]
    if errors:
        return [
            Finding(
                category,
                check,
                "WARN",
                "could not read the samples in a fresh interpreter: " + "; ".join(errors),
                "run the dataset once in a fresh `python -c` to see the error",
            )
        ]
    limit = len(first.get("order") or ())
    where = f"the first {limit} samples in fresh interpreters with PYTHONHASHSEED={seeds[0]} and {seeds[1]}"
    if first == second:
        return [Finding(category, check, "PASS", f"{where}: same index order and same content per index")]
    control = runs.get(record.get("control") or "") or {}
    if control and control != first:
        return [
            Finding(
                category,
                check,
                "INFO",
                f"{where} differ, but so do two interpreters with the same "
                f"PYTHONHASHSEED={seeds[0]}: randomness that changes on every run (the repeat checks judge "
                "it), not the hash salt",
            )
        ]
    return [_salted(where, first, second)]


def _salted(where: str, first: dict[str, Any], second: dict[str, Any]) -> Finding:
    """The hash salt changes what is read: name the order, the reordered samples or the changed fields."""
    category, check = "determinism", "same samples across interpreter processes"
    parts: list[str] = []
    fixes: list[str] = []
    if first.get("order") != second.get("order"):
        parts.append("the sampler's index order changed")
        fixes.append("the sampler iterates an unordered collection: iterate sorted(...) of it")
    moved, changed, names = _fields_changed(first.get("samples") or {}, second.get("samples") or {})
    total = len(first.get("samples") or {})
    if moved:  # other samples at these indices; partly equal ones are other samples sharing a label
        parts.append(
            f"{moved + changed} of {total} indices hold another sample ({moved} differ in every field): "
            "the index -> file mapping is built from a set or dict order"
        )
        fixes.append(
            "sort the file list: sorted(set(paths)) or sorted(os.listdir(...)), never list(set(...))"
        )
    elif changed:
        fields = ", ".join(f"field {n}" if n.isdigit() else n for n in names)
        parts.append(
            f"{changed} of {total} indices changed value in {fields} (the rest of the sample is the "
            "same): computed from hash(str), which Python salts per process"
        )
        fixes.append(
            "use a stable hash instead of hash(): zlib.crc32(name.encode()) % n or "
            "int(hashlib.sha256(name.encode()).hexdigest(), 16) % n"
        )
    evidence = (
        f"{where}: " + "; ".join(parts) + " (a third interpreter with the first seed agreed with the first)"
    )
    return Finding(category, check, "FAIL", evidence, "; ".join(fixes))


SEEDED_FIX = (
    "give the DataLoader its own seeded generator: DataLoader(..., shuffle=True, "
    "generator=torch.Generator().manual_seed(SEED)) created inside the function (with workers, also "
    "worker_init_fn seeding numpy/random from torch.initial_seed() % 2**32)"
)


def own_loader(record: dict[str, Any] | None) -> list[Finding]:
    """The user's loader as given: the order repeats across two runs; epoch 2 differs from epoch 1."""
    if not record:
        return []
    category = "your loader"
    if record.get("iterable"):
        return [
            Finding(
                category,
                "order repeats across runs",
                "INFO",
                "an IterableDataset has no sampler: its "
                "stream's order is its own (check it with --dataset, which compares whole runs)",
            )
        ]
    used = record.get("settings") or {}
    run1, run2 = record.get("run1") or [[]], record.get("run2") or [[]]
    limit = len(run1[0])
    desc = (
        f"the first {limit} indices of two fresh loaders ({used.get('sampler')}, num_workers="
        f"{used.get('num_workers')}), the global torch RNG seeded differently before each (as when model "
        "init or another loader draws first)"
    )
    out: list[Finding] = []
    if run1[0] == run2[0]:
        out.append(Finding(category, "order repeats across runs", "PASS", f"{desc}: same order"))
    elif not used.get("generator"):
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


def _epochs(category: str, run1: list[list[str]], used: dict[str, Any]) -> Finding:
    check = "epoch 2 differs from epoch 1"
    if run1[0] != run1[1]:
        return Finding(
            category, check, "PASS", f"the first {len(run1[0])} indices of epoch 2 differ from epoch 1"
        )
    if used.get("sampler") == "SequentialSampler":
        return Finding(
            category, check, "INFO", "the loader is not shuffled: every epoch reads the same order"
        )
    return Finding(
        category,
        check,
        "WARN",
        f"epoch 2 repeats epoch 1's order ({used.get('sampler')})",
        "a sampler that reseeds every epoch needs the epoch: call sampler.set_epoch(epoch) before each "
        "epoch (DistributedSampler), or seed its generator once, not per __iter__",
    )


def replaces_main_phases(raw: dict[str, Any]) -> bool:
    """True when the module skipped its own phases: a --loader run, or workers that cannot start."""
    safety = raw.get("start_method_safety") or {}
    return bool(raw.get("loader")) or bool(safety.get("problems") and safety.get("method") != "fork")


def findings(raw: dict[str, Any]) -> list[Finding]:
    """Every issue-10 verdict on the module's output."""
    skipped = [
        Finding(
            "budget",
            f"{s['phase']} check",
            "INFO",
            f"not run: it needs about {s['needs_s']} s and "
            f"{s.get('left_s')} s of the --budget were left for it",
            "give a larger --budget (e.g. --budget 40)",
        )
        for s in raw.get("pipeline_skipped") or ()
    ]
    return (
        start_method(raw.get("start_method_safety"))
        + startup(raw.get("startup"))
        + own_loader(raw.get("loader"))
        + loader_verdicts.identity((raw.get("loader") or {}).get("identity"))
        + cross_process(raw.get("crossproc"))
        + skipped
    )


def summary(raw: dict[str, Any]) -> dict[str, Any]:
    """The JSON output's `pipeline` section (the per-index digests stay inside the analysis)."""
    out: dict[str, Any] = {}
    if raw.get("start_method_safety"):
        out["start_method_safety"] = raw["start_method_safety"]
    if raw.get("loader"):
        out["loader"] = raw["loader"]
    if raw.get("memory"):
        out["memory"] = raw["memory"]
    if raw.get("startup"):
        out["startup"] = raw["startup"]
    cross = raw.get("crossproc")
    if cross:
        out["cross_process"] = {
            "seeds": cross.get("seeds"),
            "limit": cross.get("limit"),
            "seconds": cross.get("seconds"),
            "control": cross.get("control"),
            "orders": {k: r.get("order") for k, r in (cross.get("runs") or {}).items()},
        }
    return out
