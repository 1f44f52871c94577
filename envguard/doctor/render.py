"""Render `envguard doctor`: the JSON body, a one-line summary with the findings grouped by category and the
verdict, and Markdown."""

from __future__ import annotations

import dataclasses
from typing import Any

from envguard.doctor.records import DoctorReport
from envguard.findings import markdown as findings_markdown
from envguard.findings import table, verdict_line
from envguard.output import Views, console_text, text_console


def to_dict(report: DoctorReport) -> dict[str, Any]:
    """The JSON body; disk properties (network, in-memory) spelled out."""
    ordered: dict[str, Any] = dataclasses.asdict(report)
    if report.facts.disk is not None:
        ordered["facts"]["disk"].update(
            network=report.facts.disk.network, in_memory=report.facts.disk.in_memory
        )
    return ordered


def human(report: DoctorReport) -> str:
    console = text_console()
    facts = report.facts
    gpus = len(facts.nvml.gpus)
    console.print(
        f"envguard doctor: {facts.environment}; {facts.cpus.usable} usable CPUs, {gpus} GPU(s); "
        f"num_workers at most {report.recommended_workers} for loading that computes",
        markup=False,
    )
    console.print(table(report.findings, "Checklist", console.width))
    console.print(verdict_line(report.findings, "doctor"), markup=False)
    return console_text(console)


def markdown(report: DoctorReport) -> str:
    return findings_markdown(report.findings)


def views(report: DoctorReport) -> Views:
    return Views(lambda: to_dict(report), lambda: human(report), lambda: markdown(report))
