"""`run_doctor`: measure the machine and the environment, then judge the records; with a loader, ask the
input-pipeline model (smoke's and watch's) for its setting."""

from __future__ import annotations

from pathlib import Path

from envguard.doctor.measure import gather
from envguard.doctor.records import DoctorReport
from envguard.doctor.verdicts import all_findings
from envguard.pipeline import most_workers
from envguard.smoke import SmokeOptions, advise_workers

LOADER_BUDGET_S = 20.0  # doctor --loader: the environment's interpreter, torch's import and a profile


def run_doctor(
    source: str | None = None,
    data_dir: Path | None = None,
    *,
    hashes: bool = True,
    loader: str | None = None,
    step_ms: float | None = None,
    step_cores: float = 0.0,
    step_threads: int | None = None,
) -> DoctorReport:
    facts = gather(source, data_dir, hashes=hashes)
    advised = None
    if loader is not None:
        options = SmokeOptions(
            source=source,
            loader=loader,
            step_ms=step_ms,
            step_cores=step_cores,
            step_threads=step_threads,
            budget_s=LOADER_BUDGET_S,
            advice_only=True,
        )
        advised = advise_workers(options)
    return DoctorReport(
        facts=facts,
        recommended_workers=most_workers(facts.cpus.usable, facts.ranks),
        findings=tuple(all_findings(facts)) + (advised.findings if advised else ()),
        loader=advised,
    )
