"""Render `envguard doctor`: the JSON body, a one-line summary with the findings grouped by category and the
verdict, and Markdown."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from envguard.doctor.records import DoctorReport
from envguard.findings import markdown as findings_markdown
from envguard.findings import table, verdict_line
from envguard.output import Views, console_text, text_console
from envguard.smoke import WorkerAdvice


def to_dict(report: DoctorReport) -> dict[str, Any]:
    """The JSON body; disk properties (network, in-memory) spelled out."""
    ordered: dict[str, Any] = dataclasses.asdict(report)
    if ordered["loader"] is not None:  # its findings are in the checklist already
        del ordered["loader"]["findings"]
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
    if report.loader is not None:
        console.print(_loader_line(report.loader), markup=False)
    console.print(table(report.findings, "Checklist", console.width))
    console.print(verdict_line(report.findings, "doctor"), markup=False)
    return console_text(console)


def _loader_line(loader: WorkerAdvice) -> str:
    """--loader: the setting the input-pipeline model gives that loader (smoke's and watch's model)."""
    file, _, name = loader.loader.rpartition(":")
    which = f"{Path(file).name}:{name}"
    if loader.threads is not None:
        threads = loader.threads
        return (
            f"{which}: torch.set_num_threads({threads.advised}) first (the step runs {threads.now} intra-op "
            f"threads on fewer cores); num_workers once watch has measured the step with {threads.advised}: "
            "see the checklist"
        )
    if loader.advice is None:
        return f"{which}: no setting (its dataset could not be profiled): see the checklist"
    advice = loader.advice
    return (
        f"{which}: DataLoader({advice.setting.call()}), ~{advice.gain:.2f}x of "
        f"num_workers={advice.current.num_workers} (rule {advice.rule}; the model smoke and watch use)"
    )


def markdown(report: DoctorReport) -> str:
    return findings_markdown(report.findings)


def views(report: DoctorReport) -> Views:
    return Views(lambda: to_dict(report), lambda: human(report), lambda: markdown(report))
