"""Watch's verdicts (pure: the run's Summary in, a Diagnosis out), one module per concern: the input
pipeline (what bounds the loop and what to change), the step's threads, memory, the GPU, the hook itself."""

from __future__ import annotations

import dataclasses

from envguard.watch.records import WatchRun
from envguard.watch.result import Diagnosis, WatchResult
from envguard.watch.summary import Summary, summarize
from envguard.watch.verdicts.gpu import gpu_findings
from envguard.watch.verdicts.hook import hook_findings
from envguard.watch.verdicts.memory import memory_findings
from envguard.watch.verdicts.pipeline import pipeline_diagnosis
from envguard.watch.verdicts.threads import threads_findings


def judge(summary: Summary) -> Diagnosis:
    """The input pipeline's diagnosis, its finding first, then the step's threads', memory's, the GPU's and
    the hook's."""
    diagnosis = pipeline_diagnosis(summary)
    others = (
        threads_findings(summary) + memory_findings(summary) + gpu_findings(summary) + hook_findings(summary)
    )
    return dataclasses.replace(diagnosis, findings=diagnosis.findings + tuple(others))


def diagnose(run: WatchRun) -> Diagnosis:
    return judge(summarize(run))


def watch_result(run: WatchRun) -> WatchResult:
    """What the command renders: the run and its diagnosis."""
    return WatchResult(run, diagnose(run))
