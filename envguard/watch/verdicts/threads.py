"""Watch's verdict on the training step's intra-op threads (pure, over the run's Summary): a CPU step that
runs more threads than the cores the job gets (a container's quota torch does not read, or other processes on
the machine) waits on itself; the input-pipeline model (envguard.pipeline.threads) gives how many."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.pipeline import too_many_threads
from envguard.watch.summary import Summary, pipeline_of


def threads_findings(summary: Summary) -> list[Finding]:
    """WARN with the thread count to set where the step's threads outnumber the cores it gets; nothing where
    they fit, the count is unknown (an older hook, no torch) or the step is not CPU work."""
    pipeline = pipeline_of(summary)
    found = too_many_threads(pipeline) if pipeline is not None else None
    if found is None:
        return []
    return [found.finding()]
