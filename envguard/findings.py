"""The one Finding type: a checked fact with a PASS/INFO/WARN/FAIL verdict, its evidence and what to do
(doctor, smoke, distributed), the worst status and exit code, and its views (a rich table, a verdict line,
Markdown)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from envguard.errors import EXIT_DRIFT, EXIT_OK
from envguard.output import NARROW, md_escape, terminal_width

Status = Literal["PASS", "INFO", "WARN", "FAIL"]
SEVERITY: dict[str, int] = {"PASS": 0, "INFO": 1, "WARN": 2, "FAIL": 3}


@dataclass(frozen=True, slots=True)
class Finding:
    """A verdict on one check. `fix` is empty only for PASS/INFO findings that need nothing done."""

    category: str
    check: str
    status: Status
    evidence: str
    fix: str = ""


def worst(findings: Iterable[Finding]) -> Status:
    """The most severe status among findings (PASS when there are none)."""
    result: Status = "PASS"
    for finding in findings:
        if SEVERITY[finding.status] > SEVERITY[result]:
            result = finding.status
    return result


def exit_code(findings: Iterable[Finding]) -> int:
    """EXIT_DRIFT (1) when any finding FAILs, else EXIT_OK."""
    return EXIT_DRIFT if worst(findings) == "FAIL" else EXIT_OK


def categories(findings: Sequence[Finding]) -> list[str]:
    """Categories in first-seen order."""
    seen: list[str] = []
    for finding in findings:
        if finding.category not in seen:
            seen.append(finding.category)
    return seen


def table(findings: Sequence[Finding], title: str, width: int | None = None) -> Any:
    """One rich table: status, check, evidence, what to do; grouped by category with section rows. Below
    NARROW columns (`width`, default the terminal's) the check heads its evidence instead of taking a column
    of its own, so no header or word is cut short."""
    from rich.table import Table

    narrow = (width or terminal_width()) < NARROW
    out = Table(title=title, title_justify="left", show_lines=False)
    out.add_column("Status", no_wrap=True)
    if not narrow:
        out.add_column("Check", overflow="fold", ratio=2)
    out.add_column("Check: evidence" if narrow else "Evidence", overflow="fold", ratio=4)
    out.add_column("What to do", overflow="fold", ratio=4)
    for category in categories(findings):
        out.add_section()
        out.add_row("", category, *([""] * (1 if narrow else 2)))
        for finding in (f for f in findings if f.category == category):
            fix = finding.fix or "nothing to do"
            if narrow:
                out.add_row(finding.status, f"{finding.check}: {finding.evidence}", fix)
            else:
                out.add_row(finding.status, finding.check, finding.evidence, fix)
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
        lines.append("| " + " | ".join(md_escape(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"
