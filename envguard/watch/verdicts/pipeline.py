"""Watch's verdict on the input pipeline (pure, over the run's Summary): is the loop waiting for data, why
(loading in the main process, workers computing or waiting, all cores busy, the disk, a step competing with
loading for the cores) and what to change, with the expected gain.

The setting and its gain come from the one input-pipeline model (envguard.pipeline.model) that smoke and
doctor ask too, fed with what the hook measured per batch (loading CPU and off-CPU wait in the processes that
load, the step's CPU and wall time, the main process's receive CPU) and the cores the process samples saw.
Only the disk is judged here first: workers waiting on I/O with the disk busy need storage, not workers.
"""

from __future__ import annotations

from envguard.findings import Finding
from envguard.pipeline import Setting, advise, too_many_threads
from envguard.watch.records import LoaderTotals
from envguard.watch.result import Change, Diagnosis
from envguard.watch.summary import Figures, Summary, pipeline_of

INPUT_BOUND = 0.10  # data wait at or above this share of the loop: the input pipeline is the bottleneck
MIN_BATCHES = 20
MIN_LOOP_S = 2.0
# a slow step is judged on wall time instead: a 5 s step gives SLOW_BATCHES batches in SLOW_LOOP_S
SLOW_BATCHES = 3
SLOW_LOOP_S = 15.0
CAUSES = {  # the model's rule -> the cause watch names
    "in-main": "in-main",
    "spare-cores": "cpu",
    "overlap-waits": "latency",
    "fewer-workers": "too-many-workers",
    "cores-busy": "all-cores-busy",
    "compete": "compete",
    "keep": "step",
    "threads": "threads",
}
LABELS = {
    "cpu": "CPU-bound workers",
    "all-cores-busy": "CPU-bound, all cores busy",
    "io": "I/O-bound (disk)",
    "latency": "I/O/latency-bound workers",
    "in-main": "loading in the main process",
    "compete": "loading competes with the step",
    "too-many-workers": "more workers than the cores hold",
    "step": "bounded by the step",
    "threads": "the step's threads outnumber its cores",
}


def _cores(value: float) -> str:
    return f"{value:.1f}"


def _workers_text(fig: Figures) -> str:
    if not fig.workers or fig.worker_cpu is None:
        return "no worker processes"
    return f"{fig.workers} worker{'s' if fig.workers != 1 else ''} at {fig.worker_cpu:.0f}% CPU"


def _disk(loader: LoaderTotals, fig: Figures) -> Change | None:
    """Workers mostly off the CPU while the disk is busy (iowait, D state): storage, not more workers."""
    if loader.settings.workers == 0 or not ((fig.iowait or 0.0) >= 10.0 or fig.dstate >= 0.2):
        return None
    text = (
        f"the disk: iowait {fig.iowait or 0:.0f}%, workers in D state {fig.dstate:.0%} of samples, reads "
        f"{fig.disk_read / 1e6:.1f} MB/s (peak {fig.disk_peak / 1e6:.1f}); move the data to local SSD or "
        "tmpfs, pack small files into larger shards; add workers only if the disk has headroom"
    )
    return Change("storage", None, text, None, rule="disk")


def _advice(summary: Summary) -> tuple[str, Change | None]:
    """(cause, advice) from the model, or the disk rule."""
    loader = summary.loader
    assert loader is not None
    disk = _disk(loader, summary.figures)
    if disk is not None:
        return "io", disk
    pipeline = pipeline_of(summary)
    if pipeline is None:
        return "step", None
    threads = too_many_threads(pipeline)
    if threads is not None:  # the step's costs are those of threads waiting on each other: no worker advice
        text = (
            f"torch.set_num_threads({threads.advised}) (from {threads.now}) first: {threads.evidence}; a "
            "step whose threads wait on each other says nothing reliable about workers, so num_workers is "
            f"judged when watch runs again with {threads.advised}"
        )
        call = f"DataLoader({pipeline.current.call()})"
        return "threads", Change("threads", threads.advised, text, None, rule="threads", dataloader=call)
    advice = advise(pipeline)
    now, new = advice.current.num_workers, advice.setting.num_workers
    if new != now:
        text = f"num_workers={new} (from {now}): {advice.reason}"
        setting, value = "num_workers", new
    elif advice.rule == "cores-busy":
        text, setting, value = advice.reason, "augmentation", None
    else:
        text, setting, value = advice.reason, "keep", None
    if advice.changed:
        text += f"; DataLoader({advice.setting.call()}); expected ~{advice.gain:.2f}x"
        text += f" ({advice.current_rate:.1f} -> {advice.predicted_rate:.1f} batches/s)"
    notes = "".join(f"; {note}" for note in advice.notes)
    return CAUSES[advice.rule], Change(
        setting,
        value,
        text + notes,
        advice.gain,
        rule=advice.rule,
        dataloader=f"DataLoader({advice.setting.call()})",
        predicted_batches_per_s=advice.predicted_rate,
        notes=advice.notes,
        advised=advice.setting,
    )


def _input(summary: Summary, loader: LoaderTotals, fraction: float) -> Diagnosis:
    fig, usable = summary.figures, summary.usable_cpus
    cause, advice = _advice(summary)
    idle = max(0.0, usable - fig.busy_cores)
    headline = (
        f"input-bound: the loop waits for data {fraction:.0%} of the time; {_workers_text(fig)}; "
        f"{_cores(idle)} of {usable} cores idle"
    )
    evidence = (
        f"wait {loader.wait_s:.1f} s of {loader.loop_s:.1f} s loop over {loader.batches} batches "
        f"({loader.batches / loader.loop_s:.1f}/s); {_workers_text(fig)}; job {_cores(fig.job_cores)} cores, "
        f"host {_cores(fig.busy_cores)} of {fig.cores} busy; iowait {fig.iowait or 0:.0f}%"
    )
    finding = Finding(
        "input pipeline",
        f"input-bound: {LABELS[cause]}",
        "FAIL" if fraction >= 0.3 else "WARN",
        evidence,
        advice.text if advice else "",
    )
    return Diagnosis(
        "input-bound",
        cause,
        headline,
        round(fraction, 4),
        _rate(loader),
        (finding,),
        advice,
        pipeline_of(summary),
    )


def _rate(loader: LoaderTotals) -> float | None:
    return round(loader.batches / loader.loop_s, 3) if loader.loop_s > 0 else None


NO_TIMING = {
    "off": "the in-process hook was off (--no-hook or --pid)",
    "no-loader": "no torch DataLoader was iterated",
}


def enough(batches: int, loop_s: float) -> bool:
    """Enough of the loop to judge: MIN_BATCHES batches over MIN_LOOP_S, or a slow step's few batches over
    SLOW_LOOP_S (the judgement needs wall time to average over, not a batch count)."""
    if loop_s >= SLOW_LOOP_S and batches >= SLOW_BATCHES:
        return True
    return batches >= MIN_BATCHES and loop_s >= MIN_LOOP_S


def pipeline_diagnosis(summary: Summary) -> Diagnosis:
    """The input pipeline's verdict: no loader timing, too short to judge, not input-bound, or input-bound
    with its cause and the advice (its one finding first; the other concerns' findings are added by
    `verdicts.judge`)."""
    fig, loader = summary.figures, summary.loader
    batches, wait, loop = summary.batches, summary.wait_s, summary.loop_s
    if loader is None or batches == 0:
        why = NO_TIMING.get(summary.hook.state, "no loader data")
        headline = (
            f"no loader timing: {why}; the job used {_cores(fig.job_cores)} of {summary.usable_cpus} cores"
        )
        finding = Finding("input pipeline", "data wait", "INFO", headline)
        return Diagnosis("no loader timing", "", headline, None, None, (finding,), None)
    fraction = wait / loop
    if not enough(batches, loop):
        headline = (
            f"too short to judge: {batches} batches in {loop:.1f} s (need {MIN_BATCHES} in {MIN_LOOP_S:g} s, "
            f"or {SLOW_BATCHES} in {SLOW_LOOP_S:g} s)"
        )
        finding = Finding(
            "input pipeline", "data wait", "INFO", headline, "watch a longer stretch of training"
        )
        return Diagnosis(
            "too short to judge", "", headline, round(fraction, 4), _rate(loader), (finding,), None
        )
    if fraction < INPUT_BOUND:
        gpu = f"; GPU {fig.gpu_util:.0f}% busy" if fig.gpu_util is not None else ""
        headline = f"not input-bound: the loop waits for data {fraction:.0%} of the time{gpu}"
        evidence = f"wait {wait:.2f} s of {loop:.1f} s loop over {batches} batches{gpu}"
        fewer = _fewer(summary)
        finding = Finding("input pipeline", "data wait", "PASS", evidence, fewer.text if fewer else "")
        if fewer is None:
            tail = "; nothing to fix in the input pipeline"
        elif fewer.setting == "keep":
            tail = f"; {fewer.dataloader}: a side note on its arguments"
        else:
            tail = f"; {fewer.text.split(':')[0]} does as well"
        return Diagnosis(
            "not input-bound",
            "",
            headline + tail,
            round(fraction, 4),
            _rate(loader),
            (finding,),
            fewer,
            pipeline_of(summary),
        )
    return _input(summary, loader, fraction)


def _fewer(summary: Summary) -> Change | None:
    """Not input-bound, but the model finds fewer workers give the same rate (less memory and start-up, the
    setting smoke gives for the same pipeline), or a note on an argument applies (pin_memory on a CPU run);
    None otherwise."""
    pipeline = pipeline_of(summary)
    if pipeline is None:
        return None
    advice = advise(pipeline)
    fewer = advice.rule == "fewer-workers" and bool(advice.setting.num_workers)
    if not fewer:  # never down to 0: loading would move into the loop, between the steps
        kept = Setting(
            pipeline.current.num_workers,
            advice.setting.prefetch_factor if pipeline.current.num_workers else None,
            advice.setting.persistent_workers,
            advice.setting.pin_memory,
        )
        if kept == pipeline.current or not advice.notes:
            return None
        call = f"DataLoader({kept.call()})"
        text = f"{call}: {'; '.join(advice.notes)}"
        return Change("keep", None, text, None, rule="keep", dataloader=call, notes=advice.notes)
    now, new = advice.current.num_workers, advice.setting.num_workers
    text = (
        f"num_workers={new} (from {now}): {advice.reason}; DataLoader({advice.setting.call()}); "
        f"expected ~{advice.gain:.2f}x ({advice.current_rate:.1f} -> {advice.predicted_rate:.1f} batches/s)"
    ) + "".join(f"; {note}" for note in advice.notes)
    return Change(
        "num_workers",
        new,
        text,
        advice.gain,
        rule=advice.rule,
        dataloader=f"DataLoader({advice.setting.call()})",
        predicted_batches_per_s=advice.predicted_rate,
        notes=advice.notes,
        advised=advice.setting,
    )
