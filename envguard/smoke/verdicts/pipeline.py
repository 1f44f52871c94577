"""Verdicts on the user's input pipeline (pure, over the in-environment records, issue 10): whether workers
can start under spawn/forkserver, what worker start-up costs per start method, and whether order and content
hold across fresh interpreters (PYTHONHASHSEED)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from envguard.findings import Finding
from envguard.smoke.measured import Measured
from envguard.smoke.measured_pipeline import CrossProcess, InterpreterRead, StartMethodSafety, StartupTimes
from envguard.smoke.verdicts.crashes import out_of_memory_text

SPAWN_NOTE = "spawn is the default on macOS and Windows, forkserver on Linux from Python 3.14"


def start_method(record: StartMethodSafety | None) -> list[Finding]:
    """FAIL under spawn/forkserver when what workers receive does not pickle; WARN under fork (it works
    today)."""
    if record is None:
        return []
    category, check = "start method", "workers can start under spawn/forkserver"
    method = record.method or "fork"
    problems = record.problems
    checked = ", ".join(record.checked) or "nothing"
    if not problems:
        return [
            Finding(
                category,
                check,
                "PASS",
                f"{checked} pickle with multiprocessing's ForkingPickler (start method {method})",
            )
        ]
    named = "; ".join(f"{p.name} ({p.error})" for p in problems)
    fixes = " | ".join(dict.fromkeys(p.fix for p in problems))
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


def startup(record: StartupTimes | None) -> list[Finding]:
    """Worker start-up (iter() to the first batch) per start method measured; under fork, what spawn costs."""
    if record is None or not record.seconds:
        return []
    seconds, in_use, persistent = record.seconds, record.in_use, record.persistent_workers
    listed = ", ".join(
        f"{method}{' (in use)' if method == in_use else ''} {value:.2f} s"
        for method, value in seconds.items()
    )
    workers = record.workers
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
    elif in_use == "fork" and record.unpicklable:
        evidence += "; spawn not measured: the dataset cannot be pickled for it (see the check above)"
    else:
        slow = float(seconds.get(in_use) or 0.0)
    fix = ""
    if slow >= SLOW_SPAWN_S and not persistent:
        fix = "persistent_workers=True pays the spawn/forkserver start-up once instead of every epoch"
    return [Finding("start method", "worker start-up per start method", "INFO", evidence, fix)]


Samples = Mapping[str, Mapping[str, str]]  # index -> field -> digest
NOTHING = InterpreterRead()  # an interpreter that left no record


def _fields_changed(first: Samples, second: Samples) -> tuple[int, int, list[str]]:
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


# the in-environment module's word for a fresh interpreter it stopped at the budget
TIMED_OUT = "no answer within the budget"


def cross_process(record: CrossProcess | None) -> list[Finding]:
    """Same order and per-index content in interpreters that differ only in PYTHONHASHSEED."""
    if record is None:
        return []
    category, check = "determinism", "same samples across interpreter processes"
    seeds = record.seeds or ("1", "2")
    runs = record.runs
    first, second = runs.get(seeds[0], NOTHING), runs.get(seeds[1], NOTHING)
    errors = [f"PYTHONHASHSEED={s}: {r.error}" for s, r in runs.items() if r.error is not None]
    if errors and all(out_of_memory_text(error) for error in errors):
        return []  # named once, with its figure, by crashes.out_of_memory
    if errors and all(r.error == TIMED_OUT for r in runs.values() if r.error is not None):
        return [  # the measurement could not finish: nothing is known about the dataset
            Finding(
                category,
                check,
                "INFO",
                "not judged: the fresh interpreters did not answer within the --budget (each imports torch "
                "and reads the first samples; a busy machine slows both)",
                "give a larger --budget (e.g. --budget 60) to run this check",
            )
        ]
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
    limit = len(first.order or ())
    where = f"the first {limit} samples in fresh interpreters with PYTHONHASHSEED={seeds[0]} and {seeds[1]}"
    if first == second:
        return [Finding(category, check, "PASS", f"{where}: same index order and same content per index")]
    control = runs.get(record.control or "")
    if control is not None and control != first:
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


def _salted(where: str, first: InterpreterRead, second: InterpreterRead) -> Finding:
    """The hash salt changes what is read: name the order, the reordered samples or the changed fields."""
    category, check = "determinism", "same samples across interpreter processes"
    parts: list[str] = []
    fixes: list[str] = []
    if first.order != second.order:
        parts.append("the sampler's index order changed")
        fixes.append("the sampler iterates an unordered collection: iterate sorted(...) of it")
    moved, changed, names = _fields_changed(first.samples or {}, second.samples or {})
    total = len(first.samples or {})
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


def replaces_main_phases(measured: Measured) -> bool:
    """True when the module skipped its own phases: a --loader run, or workers that cannot start."""
    safety = measured.start_method_safety
    return measured.loader is not None or bool(safety and safety.problems and safety.method != "fork")
