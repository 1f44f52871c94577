"""Watch's verdict on the training step's intra-op threads (pure, over the run's Summary): a CPU step that
runs more threads than the cores the job gets (a container's quota torch does not read, or other processes on
the machine) waits on itself; the model (envguard.pipeline.model.step_threads) gives how many."""

from __future__ import annotations

from dataclasses import dataclass

from envguard.findings import Finding
from envguard.pipeline import model
from envguard.pipeline.costs import Pipeline
from envguard.watch.summary import Summary, pipeline_of


@dataclass(frozen=True, slots=True)
class Threads:
    """Fewer intra-op threads for the step: how many it runs, how many to run, the figures and the fix."""

    now: int
    advised: int
    evidence: str
    fix: str


def too_many_threads(pipeline: Pipeline) -> Threads | None:
    """The thread advice where the step's threads outnumber the cores the job gets; None otherwise."""
    advised = model.step_threads(pipeline)
    if advised is None or pipeline.step_threads is None:
        return None
    threads, costs, cores = pipeline.step_threads, pipeline.costs, pipeline.cores
    where = f"{cores.usable} usable cores"
    if cores.others >= 0.25:
        gets = model.job_cores(cores, float(threads))
        where = (
            f"the {gets:.1f} cores the job gets of {where} beside {cores.others:.1f} other runnable processes"
        )
    evidence = (
        f"the step runs torch's {threads} intra-op threads on {where}: a {costs.step_wall * 1e3:.1f} ms step "
        f"using {costs.step_cores:.1f} cores"
    )
    fix = (
        f"torch.set_num_threads({advised}) before training (or OMP_NUM_THREADS={advised}), then run watch "
        "again: a step's threads wait at each parallel region for any one of them that is off the CPU; its "
        "pace with fewer threads is measured, not predicted"
    )
    return Threads(threads, advised, evidence, fix)


def threads_findings(summary: Summary) -> list[Finding]:
    """WARN with the thread count to set where the step's threads outnumber the cores it gets; nothing where
    they fit, the count is unknown (an older hook, no torch) or the step is not CPU work."""
    pipeline = pipeline_of(summary)
    found = too_many_threads(pipeline) if pipeline is not None else None
    if found is None:
        return []
    return [Finding("training step", "intra-op threads", "WARN", found.evidence, found.fix)]
