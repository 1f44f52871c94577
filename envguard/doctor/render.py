"""Render `envguard doctor`: a one-line summary, the findings grouped by category, and the verdict."""

from __future__ import annotations

from envguard.doctor.run import DoctorReport
from envguard.findings import table, verdict_line


def render(report: DoctorReport) -> str:
    from envguard.output import text_console

    console = text_console()
    facts = report.facts
    gpus = len(facts.nvml.gpus)
    console.print(
        f"envguard doctor: {facts.environment}; {facts.cpus.usable} usable CPUs, {gpus} GPU(s); "
        f"recommended num_workers={report.recommended_workers}",
        markup=False,
    )
    console.print(table(report.findings, "Checklist", console.width))
    console.print(verdict_line(report.findings, "doctor"), markup=False)
    output: str = console.file.getvalue()
    return output
