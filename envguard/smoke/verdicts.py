"""Smoke verdicts other than determinism (pure): loader efficiency, your num_workers, /dev/shm, GPU, golden
streams against a lock, and crashes inside the environment. Each FAIL/WARN carries a concrete fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envguard.findings import Finding, Status
from envguard.machine.host import ShmInfo, shm_needed
from envguard.model import Fingerprints
from envguard.output import human_bytes
from envguard.smoke.report import DatasetResult, Recommendation, SweepRow
from envguard.smoke.throughput import rate_at

PASS_EFFICIENCY, WARN_EFFICIENCY = 0.85, 0.6
SLOW_STARTUP_S = 1.0
JUST_AS_SLOW = (
    0.75  # persistent workers' epoch-2 first batch at this share of the plain first batch: no start-up
)
CONTENDED = 0.2  # other processes' share of the CPUs above which a slow measurement says "busy machine"
THROTTLED = 0.1  # share of the time the cgroup quota throttled us
PSI_BUSY = 0.2  # share of the time some task waited for a CPU
GOLDEN_STREAMS = (
    ("torch_randperm", "torch.randperm"),
    ("dataloader_order", "DataLoader shuffle order"),
    ("numpy_legacy", "NumPy RandomState"),
    ("numpy_generator", "NumPy Generator"),
)
SHM_FIX = (
    "give the container more shared memory: `docker run --shm-size=2g` (or --ipc=host); on Kubernetes mount "
    "an "
    "emptyDir with medium: Memory at /dev/shm; or lower batch_size, num_workers or prefetch_factor"
)
STARVED_FIX = (
    "raise num_workers (I/O-bound data can use more workers than CPUs), use persistent_workers=True, and "
    "check /dev/shm and `ulimit -n` with `envguard doctor`"
)


def efficiency(dataset: DatasetResult, rec: Recommendation | None, usable: int) -> list[Finding]:
    """Efficiency (measured / ideal) at each worker count up to the usable CPUs, judged by the worst one, and
    how slow worker start-up is."""
    category = f"throughput: {dataset.name}"
    if dataset.error:
        return [crash(category, dataset.error)]
    best = _best_by_workers(dataset, usable)
    if rec is None or not best:
        return [
            Finding(
                category,
                "loader efficiency",
                "WARN",
                "no configuration could be measured in the budget",
                "give a larger --budget or fewer --workers",
            )
        ]
    cost = f"L={dataset.latency_ms:g} ms" + (f", C={dataset.cpu_ms:g} ms" if dataset.cpu_ms else "")
    model = "N/L" if dataset.bound == "io" else "min(N, physical cores)/C"
    listed = ", ".join(f"N={w}: {r.samples_per_s:.0f}/s = {r.efficiency:.2f}" for w, r in best.items())
    worst = min(best.values(), key=lambda r: r.efficiency or 0.0)
    evidence = f"samples/s and efficiency vs ideal {model} ({cost}): {listed}"
    if 0 in best:
        evidence += " (N=0 with one intra-op thread, as each worker runs)"
    if worst.efficiency is None:
        out = [
            Finding(category, "loader efficiency", "INFO", evidence + " (no ideal: unknown per-sample cost)")
        ]
    elif worst.efficiency >= PASS_EFFICIENCY:
        out = [Finding(category, "loader efficiency", "PASS", evidence)]
    else:
        out = [_inefficient(category, worst, f"{evidence}; num_workers={worst.workers} falls short", usable)]
    out += _measurement_notes(category, dataset)
    slow = slow_startups(dataset)
    if slow:
        worst, seconds, against = max(slow, key=lambda item: item[1])
        how = " (persistent workers got theirs that much sooner)" if against else ""
        out.append(
            Finding(
                category,
                "worker start-up",
                "WARN",
                f"num_workers={worst.workers} needs {seconds:.2f} s before its first batch{how}",
                "slow start-up is paid every epoch unless persistent_workers=True; keep the dataset cheap to "
                "pickle "
                "(open files lazily in the worker) and avoid heavy imports at module level under "
                "spawn/forkserver",
            )
        )
    return out


def slow_startups(dataset: DatasetResult) -> list[tuple[SweepRow, float, bool]]:
    """(row, start-up seconds, measured against persistent workers) for workers that start slowly. Where
    persistent workers (which start nothing) were timed at that count, start-up is what they save: the
    plain first batch minus their epoch-2 first batch; else the first batch minus a measured round. Either
    way a first batch slow because the CPUs are shared (oversubscribed, a busy machine) is not start-up."""
    warm = {r.workers: r.epoch2_first_batch_s for r in dataset.rows if r.persistent_workers}
    out = []
    for row in dataset.measured():
        if row.workers == 0 or row.persistent_workers or row.first_batch_s is None:
            continue
        again = warm.get(row.workers)
        seconds = row.first_batch_s - again if again is not None else row.startup_s or 0.0
        if seconds > SLOW_STARTUP_S:
            out.append((row, seconds, again is not None))
    return out


def _measurement_notes(category: str, dataset: DatasetResult) -> list[Finding]:
    """Rows whose rate is not reported (above the physical limit) and rows measured over too few rounds."""
    out: list[Finding] = []
    wrong = [r for r in dataset.rows if r.unreliable]
    if wrong:
        listed = "; ".join(f"num_workers={r.workers}: {r.unreliable}" for r in wrong)
        out.append(
            Finding(
                category,
                "unreliable measurement",
                "WARN",
                listed,
                "rerun on an idle machine with a larger --budget (more rounds per configuration)",
            )
        )
    few = [
        r for r in dataset.measured() if r.few_rounds and not r.persistent_workers
    ]  # that one is short on purpose
    if few:
        listed = ", ".join(f"num_workers={r.workers}: {max(r.rounds - 1, 0)}" for r in few)
        out.append(
            Finding(
                category,
                "rounds measured",
                "INFO",
                f"rounds after start-up {listed} (6 wanted): the budget could not fit more, so these "
                "rates are less certain",
                "give a larger --budget or fewer --workers",
            )
        )
    return out


def _best_by_workers(dataset: DatasetResult, usable: int) -> dict[int, SweepRow]:
    """The fastest measured row for each worker count up to the usable CPUs, with an efficiency."""
    best: dict[int, SweepRow] = {}
    for row in dataset.measured():
        if row.workers > usable or row.efficiency is None or row.persistent_workers:
            continue
        if row.workers not in best or (row.samples_per_s or 0.0) > (best[row.workers].samples_per_s or 0.0):
            best[row.workers] = row
    return dict(sorted(best.items()))


def busy_evidence(row: SweepRow, usable: int) -> str:
    """Why the machine counts as busy during this row, from cgroup throttling, PSI or others' CPU; '' if
    not."""
    if row.throttled is not None and row.throttled >= THROTTLED:
        return (
            f"the cgroup's CPU quota throttled this run {row.throttled:.0%} of the time (cpu.stat "
            "throttled_usec)"
        )
    if row.others_cpu is not None and row.others_cpu >= CONTENDED:
        return f"other processes used {row.others_cpu:.0%} of the CPUs meanwhile"
    # PSI counts our own tasks too: evidence only when the loader left a CPU free
    if row.psi_some is not None and row.psi_some >= PSI_BUSY and row.workers + 1 < usable:
        return f"some task waited for a CPU {row.psi_some:.0%} of the time (/proc/pressure/cpu)"
    return ""


def _inefficient(category: str, row: SweepRow, evidence: str, usable: int = 1) -> Finding:
    """Below the ideal: the loader's fault, unless the machine was busy meanwhile (and we can show it)."""
    busy = busy_evidence(row, usable)
    if busy:
        return Finding(
            category,
            "loader efficiency",
            "WARN",
            f"{evidence}; {busy}",
            "the machine was busy, so this measures contention, not the loader: rerun on an idle machine",
        )
    status: Status = "WARN" if (row.efficiency or 0.0) >= WARN_EFFICIENCY else "FAIL"
    return Finding(
        category,
        "loader efficiency",
        status,
        evidence,
        "workers lose time to inter-process transfer or start-up: " + STARVED_FIX,
    )


def your_workers(
    dataset: DatasetResult, rec: Recommendation | None, num_workers: int | None
) -> list[Finding]:
    """Judge the num_workers the user trains with against the best measured configuration."""
    if num_workers is None or rec is None or dataset.error:
        return []
    category = f"throughput: {dataset.name}"
    mine, best = rate_at(dataset, num_workers), rec.samples_per_s
    if mine is None:
        return [
            Finding(
                category,
                f"num_workers={num_workers}",
                "INFO",
                "not measured within the budget",
                "give a larger --budget",
            )
        ]
    ratio = best / mine if mine else float("inf")
    evidence = (
        f"num_workers={num_workers} reaches {mine:.0f} samples/s; "
        f"num_workers={rec.workers} reaches {best:.0f} ({ratio:.1f}x)"
    )
    if ratio >= 1.5:
        kind = "I/O-bound" if dataset.bound == "io" else "CPU-bound"
        return [
            Finding(
                category,
                f"num_workers={num_workers}",
                "FAIL",
                f"too few workers for this {kind} dataset: {evidence}",
                f"set DataLoader(num_workers={rec.workers}, persistent_workers=True); the GPU waits for data "
                "otherwise",
            )
        ]
    if ratio >= 1.15:
        return [
            Finding(
                category,
                f"num_workers={num_workers}",
                "WARN",
                evidence,
                f"num_workers={rec.workers} is faster: {rec.reason}",
            )
        ]
    return [Finding(category, f"num_workers={num_workers}", "PASS", evidence)]


def still_scaling(dataset: DatasetResult, rec: Recommendation | None) -> list[Finding]:
    """Your own I/O-bound data still speeding up at the most workers tried: more workers than CPUs may
    help."""
    if dataset.nominal or rec is None or dataset.bound != "io" or not dataset.measured():
        return []
    most = max(r.workers for r in dataset.measured())
    if rec.workers == most and most > 0 and (rec.efficiency or 0.0) >= 0.8:
        return [
            Finding(
                f"throughput: {dataset.name}",
                "more workers",
                "WARN",
                f"still scaling at num_workers={most} ({rec.samples_per_s:.0f} samples/s, "
                f"{rec.efficiency or 0:.2f} of ideal)",
                "I/O-bound loading can use more workers than CPUs: try `envguard smoke --workers "
                f"0,{most},{most * 2},{most * 4}`",
            )
        ]
    return []


def shm(info: ShmInfo, datasets: Sequence[DatasetResult], workers: int, prefetch_factor: int = 2) -> Finding:
    """Whether /dev/shm holds the batches in flight (workers x prefetch_factor batches)."""
    sizes = [d.batch_bytes for d in datasets if d.batch_bytes]
    if not info.exists:
        return Finding(
            "host",
            "/dev/shm",
            "INFO",
            f"{info.path} does not exist (not Linux?)",
            "nothing to do unless workers crash with 'bus error'",
        )
    if not sizes or workers == 0:
        return Finding(
            "host", "/dev/shm", "PASS", f"{human_bytes(info.free)} free; no batches cross it (num_workers=0)"
        )
    batch = max(sizes)
    needed = shm_needed(batch, workers, prefetch_factor)
    evidence = (
        f"num_workers={workers} x prefetch_factor {prefetch_factor} x {human_bytes(batch)} batches = "
        f"{human_bytes(needed)} in flight; {info.path} has {human_bytes(info.free)} free of "
        f"{human_bytes(info.total)}"
    )
    if needed > info.free:
        return Finding("host", "/dev/shm", "FAIL", evidence + ": workers will die with 'bus error'", SHM_FIX)
    if needed * 2 > info.free:
        return Finding("host", "/dev/shm", "WARN", evidence + ": less than 2x headroom", SHM_FIX)
    return Finding("host", "/dev/shm", "PASS", evidence)


def crash(category: str, error: str) -> Finding:
    """A crash inside the environment, with the fix its message points at."""
    lowered = error.lower()
    if "bus error" in lowered or "shared memory" in lowered or "shm" in lowered:
        fix = SHM_FIX
    elif "ancdata" in lowered or "too many open files" in lowered:
        fix = (
            "raise the open-file limit (`ulimit -n 65536`) or call "
            "torch.multiprocessing.set_sharing_strategy('file_system') before creating the DataLoader"
        )
    elif "pickle" in lowered or "can't get attribute" in lowered:
        fix = (
            "define the dataset, collate_fn and worker_init_fn at module level so spawn/forkserver workers "
            "can pickle them"
        )
    else:
        fix = (
            "run the dataset once with num_workers=0 to see the full traceback, fix it, then rerun "
            "envguard smoke"
        )
    return Finding(category, "crash", "FAIL", error, fix)


def golden(here: dict[str, Any] | None, lock: Fingerprints | None, lock_name: str) -> list[Finding]:
    """The environment's seeded streams against the fingerprints recorded in the lock."""
    if lock is None:
        return [
            Finding(
                "golden streams",
                lock_name,
                "WARN",
                "the lock carries no fingerprints",
                "re-create it with `envguard lock` (or `envguard snapshot`) so the streams are recorded",
            )
        ]
    if not here:
        return [
            Finding(
                "golden streams",
                lock_name,
                "WARN",
                "the streams could not be computed here (see errors)",
                "rerun envguard smoke; check that torch imports in the environment",
            )
        ]
    out: list[Finding] = []
    for key, label in GOLDEN_STREAMS:
        recorded, measured = getattr(lock, key), here.get(key)
        if not recorded or not measured:
            continue
        if recorded == measured:
            out.append(Finding("golden streams", label, "PASS", f"matches {lock_name} ({measured[:12]})"))
            continue
        torch_now, numpy_now = here.get("torch_version"), here.get("numpy_version")
        versions = f"torch {lock.torch_version} -> {torch_now}, numpy {lock.numpy_version} -> {numpy_now}"
        out.append(
            Finding(
                "golden streams",
                label,
                "FAIL",
                f"{measured[:12]} here, {recorded[:12]} in {lock_name} ({versions})",
                "shuffles and augmentations will not reproduce: install the locked versions "
                f"(`envguard check {lock_name}` lists them) or re-lock if the change is intended",
            )
        )
    return out or [
        Finding(
            "golden streams",
            lock_name,
            "INFO",
            "no stream recorded on both sides",
            "record fingerprints with `envguard lock` in an environment with torch and numpy",
        )
    ]
