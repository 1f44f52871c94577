"""Render `envguard doctor`: a one-line summary, the findings grouped by category, and the verdict."""

from __future__ import annotations

import io
import shutil

from envguard.doctor.run import DoctorReport
from envguard.findings import table, verdict_line


def render(report: DoctorReport) -> str:
    from rich.console import Console

    width = max(100, shutil.get_terminal_size((130, 24)).columns)
    console = Console(file=io.StringIO(), width=width, highlight=False, soft_wrap=False)
    facts = report.facts
    gpus = len(facts.nvml.gpus)
    console.print(
        f"envguard doctor: {facts.environment}; {facts.cpus.usable} usable CPUs, {gpus} GPU(s); "
        f"recommended num_workers={report.recommended_workers}",
        markup=False,
    )
    console.print(table(report.findings, "Checklist"))
    console.print(verdict_line(report.findings, "doctor"), markup=False)
    output: str = console.file.getvalue()  # type: ignore[attr-defined]
    return output
