"""`run_doctor`: measure the machine and the environment, then judge the records."""

from __future__ import annotations

from pathlib import Path

from envguard.doctor.measure import gather
from envguard.doctor.records import DoctorReport
from envguard.doctor.verdicts import all_findings
from envguard.machine.host import recommended_workers


def run_doctor(
    source: str | None = None, data_dir: Path | None = None, *, hashes: bool = True
) -> DoctorReport:
    facts = gather(source, data_dir, hashes=hashes)
    return DoctorReport(
        facts=facts,
        recommended_workers=recommended_workers(facts.cpus, facts.ranks),
        findings=tuple(all_findings(facts)),
    )
