"""Render findings (doctor and smoke): a rich table per category, a one-line verdict, and Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envguard.doctor.findings import SEVERITY, Finding, worst

STYLE = {"PASS": "green", "INFO": "cyan", "WARN": "yellow", "FAIL": "bold red"}


def categories(findings: Sequence[Finding]) -> list[str]:
    """Categories in first-seen order."""
    seen: list[str] = []
    for finding in findings:
        if finding.category not in seen:
            seen.append(finding.category)
    return seen


def table(findings: Sequence[Finding], title: str) -> Any:
    """One rich table: status, check, evidence, what to do; grouped by category with section rows."""
    from rich.table import Table

    out = Table(title=title, title_justify="left", show_lines=False)
    out.add_column("Status", no_wrap=True)
    out.add_column("Check", overflow="fold", ratio=2)
    out.add_column("Evidence", overflow="fold", ratio=4)
    out.add_column("What to do", overflow="fold", ratio=4)
    for category in categories(findings):
        out.add_section()
        out.add_row("", f"[bold]{category}[/bold]", "", "")
        for finding in (f for f in findings if f.category == category):
            status = f"[{STYLE[finding.status]}]{finding.status}[/{STYLE[finding.status]}]"
            out.add_row(status, finding.check, finding.evidence, finding.fix or "nothing to do")
    return out


def verdict_line(findings: Sequence[Finding], what: str) -> str:
    """`smoke: FAIL (2 FAIL, 1 WARN, 9 PASS)`."""
    counts = {s: sum(1 for f in findings if f.status == s) for s in SEVERITY}
    parts = ", ".join(
        f"{counts[s]} {s}" for s in sorted(SEVERITY, key=SEVERITY.__getitem__, reverse=True) if counts[s]
    )
    return f"{what}: {worst(findings)} ({parts or 'nothing checked'})"


def markdown(findings: Sequence[Finding]) -> str:
    """A Markdown table of the findings (for PR comments and CI summaries)."""
    lines = ["| Status | Category | Check | Evidence | What to do |", "|---|---|---|---|---|"]
    for f in findings:
        cells = [f.status, f.category, f.check, f.evidence, f.fix or "nothing to do"]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"
