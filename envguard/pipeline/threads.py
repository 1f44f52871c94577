"""The thread advice of the input-pipeline model (pure): a CPU step that runs more intra-op threads than the
cores the job gets (a container's quota torch does not read, or other processes on the machine) waits on
itself; `model.step_threads` gives how many to run. watch judges it on the step it measured; smoke and doctor
on the step watch measured (--step-ms, --step-cores, --step-threads) beside the load their profile saw."""

from __future__ import annotations

from dataclasses import dataclass

from envguard.findings import Finding
from envguard.pipeline import model
from envguard.pipeline.costs import Pipeline

CATEGORY = "training step"
CHECK = "intra-op threads"


@dataclass(frozen=True, slots=True)
class Threads:
    """Fewer intra-op threads for the step: how many it runs, how many to run, the figures and the fix."""

    now: int
    advised: int
    evidence: str
    fix: str

    def finding(self) -> Finding:
        """The WARN that names the thread count to set."""
        return Finding(CATEGORY, CHECK, "WARN", self.evidence, self.fix)


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
