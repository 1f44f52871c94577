"""Throughput verdicts (pure, over each dataset's analysed sweep): loader efficiency against the ideal, slow
worker start-up, the rows measured too briefly or beyond physics, your num_workers against the best, and
I/O-bound data still scaling. Each FAIL/WARN carries a concrete fix."""

from __future__ import annotations

from envguard.findings import Finding, Status
from envguard.smoke.advice import rate_at
from envguard.smoke.report import DatasetResult, Recommendation, SweepRow
from envguard.smoke.verdicts.crashes import crash, out_of_memory_text

PASS_EFFICIENCY, WARN_EFFICIENCY = 0.85, 0.6
SLOW_STARTUP_S = 1.0
CONTENDED = 0.2  # other processes' share of the CPUs above which a slow measurement says "busy machine"
THROTTLED = 0.1  # share of the time the cgroup quota throttled us
PSI_BUSY = 0.2  # share of the time some task waited for a CPU
STARVED_FIX = (
    "raise num_workers (I/O-bound data can use more workers than CPUs), use persistent_workers=True, and "
    "check /dev/shm and `ulimit -n` with `envguard doctor`"
)


def efficiency(dataset: DatasetResult, rec: Recommendation | None, usable: int) -> list[Finding]:
    """Efficiency (measured / ideal) at each worker count up to the usable CPUs, judged by the worst one, and
    how slow worker start-up is."""
    category = f"throughput: {dataset.name}"
    if dataset.error:  # running out of memory is named once, by crashes.out_of_memory
        return [] if out_of_memory_text(dataset.error) else [crash(category, dataset.error)]
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
        out = [inefficient(category, worst, f"{evidence}; num_workers={worst.workers} falls short", usable)]
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
    wrong = [r for r in dataset.rows if r.unreliable and not r.samples_per_s]  # a kept row is not a WARN
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
    whole = [r for r in few if dataset.length is not None and (r.batches + 1) * r.batch_size > dataset.length]
    if whole:
        size = max(whole[0].batch_size, 1)
        listed = ", ".join(f"num_workers={r.workers}: {max(r.rounds - 1, 0)}" for r in whole)
        out.append(
            Finding(
                category,
                "rounds measured",
                "INFO",
                f"rounds after start-up {listed} (6 wanted): the dataset holds only "
                f"{(dataset.length or 0) // size} batches of {size}, so these rates are less certain",
                "a larger dataset (or a smaller batch size) gives more rounds per configuration",
            )
        )
        few = [r for r in few if r not in whole]
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


def inefficient(category: str, row: SweepRow, evidence: str, usable: int = 1) -> Finding:
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
    # a rate short of the ideal says how fast loading is, not that the data or the loader is wrong: WARN at
    # most (FAIL is kept for wrong data), INFO while it is within WARN_EFFICIENCY
    status: Status = "INFO" if (row.efficiency or 0.0) >= WARN_EFFICIENCY else "WARN"
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
                "WARN",  # slow, not wrong: FAIL is kept for data or a loader that is wrong
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
