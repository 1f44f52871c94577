"""The one Finding type: a checked fact with a PASS/INFO/WARN/FAIL verdict, its evidence and what to do
(doctor, smoke, distributed), the worst status and exit code, and its views (a rich table, a verdict line,
Markdown)."""

from __future__ import annotations

import re
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
    of its own, so no header or word is cut short. Lines break at spaces only: each column is at least as wide
    as the longest code in it (`persistent_workers=False,`, up to CODE_MOST), so code is never split."""
    from rich.table import Table

    columns = width or terminal_width()
    narrow = columns < NARROW
    rows: list[tuple[str, ...]] = []
    for category in categories(findings):
        rows.append(("", category, *([""] * (1 if narrow else 2))))
        for finding in (f for f in findings if f.category == category):
            fix = finding.fix or "nothing to do"
            if narrow:
                rows.append((finding.status, f"{finding.check}: {finding.evidence}", fix))
            else:
                rows.append((finding.status, finding.check, finding.evidence, fix))
    headers = ("Check: evidence", "What to do") if narrow else ("Check", "Evidence", "What to do")
    ratios = (1, 1) if narrow else (2, 4, 4)
    least = [max(len(header), _longest_code(row[i + 1] for row in rows)) for i, header in enumerate(headers)]
    # the Status column (6), a border left of each column and one at the end, a space each side of each cell
    room = columns - STATUS_WIDTH - (len(headers) + 2) - 2 * (len(headers) + 1)
    out = Table(title=title, title_justify="left", show_lines=False)
    out.add_column("Status", no_wrap=True, width=STATUS_WIDTH)
    for header, cells in zip(headers, _share(room, ratios, least), strict=True):
        out.add_column(header, overflow="fold", width=cells)
    for row in rows:
        if not row[0]:
            out.add_section()
        out.add_row(*row)
    return out


STATUS_WIDTH = 6
CODE_MOST = 30  # longer code may still fold: the table must fit the terminal
CODE = re.compile(r"^[^/]*(\w=|\w\()")  # `num_workers=32,`, `torch.set_num_threads(1)`; not a path or URL


def _longest_code(cells: Iterable[str]) -> int:
    """The longest word in `cells` that is code a user types (a `name=value` or a call), up to CODE_MOST."""
    words = (word for cell in cells for word in cell.split() if CODE.match(word))
    return min(CODE_MOST, max(map(len, words), default=1))


def _share(room: int, ratios: Sequence[int], least: Sequence[int]) -> list[int]:
    """`room` split by `ratios`, no column under its `least`: a column whose share falls short gets its least
    and the others share what is left (where even the leasts do not fit, rich folds)."""
    fixed: dict[int, int] = {}
    while True:
        left = room - sum(fixed.values())
        open_ = [i for i in range(len(ratios)) if i not in fixed]
        weight = sum(ratios[i] for i in open_)
        short = [i for i in open_ if left * ratios[i] < least[i] * weight]
        if not short or len(short) == len(open_):
            break
        fixed.update((i, least[i]) for i in short)
    shares = {i: max(1, left * ratios[i] // weight) for i in open_}
    shares[open_[-1]] += max(0, left - sum(shares.values()))
    return [fixed.get(i, shares.get(i, 1)) for i in range(len(ratios))]


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
