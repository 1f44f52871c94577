"""Watch's verdict on the training step's intra-op threads (pure, over the run's Summary): a CPU step that
runs more threads than the cores the job gets (a container's quota torch does not read, or other processes on
the machine) waits on itself; the model (envguard.pipeline.model.step_threads) gives how many."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.pipeline import model
from envguard.watch.summary import Summary, pipeline_of


def threads_findings(summary: Summary) -> list[Finding]:
    """WARN with the thread count to set where the step's threads outnumber the cores it gets; nothing where
    they fit, the count is unknown (an older hook, no torch) or the step is not CPU work."""
    pipeline = pipeline_of(summary)
    advised = model.step_threads(pipeline) if pipeline is not None else None
    if pipeline is None or advised is None:
        return []
    threads, costs, cores = pipeline.step_threads, pipeline.costs, pipeline.cores
    where = f"{cores.usable} usable cores"
    if cores.others >= 0.25:
        gets = model.job_cores(cores, float(threads or 0))
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
    return [Finding("training step", "intra-op threads", "WARN", evidence, fix)]
