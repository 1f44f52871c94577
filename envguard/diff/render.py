"""Render a Diff: a rich table grouped by category, JSON, or Markdown for a PR comment."""

from __future__ import annotations

import io

from envguard.diff.changes import TITLES, Change, Diff
from envguard.output import document, dumps, md_escape

_KIND = {
    "only-a": "only in A",
    "only-b": "only in B",
    "changed": "changed",
    "unsatisfied": "unsatisfied",
    "unjudged": "not checkable",
    "hazard": "hazard",
}


def summary(diff: Diff) -> str:
    """The one-line verdict."""
    counted = sum(1 for c in diff.changes if not c.informational)
    if diff.equal:
        how = "satisfies" if diff.mode == "satisfaction" else "equals"
        return f"EQUAL: B {how} A" if diff.mode == "satisfaction" else f"EQUAL: A {how} B"
    return f"DIFFERENT: {counted} difference(s) between A and B"


def _what(change: Change) -> str:
    if change.kind == "changed" and change.fields and change.fields != ("value",):
        return ", ".join(change.fields)
    return _KIND[change.kind]


def table(diff: Diff, *, width: int = 140) -> str:
    """Human view: one rich table, a section per category."""
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, highlight=False, soft_wrap=False, color_system=None)
    console.print(f"A: {diff.a_label}\nB: {diff.b_label}")
    if diff.changes:
        grid = Table(show_lines=False, expand=False)
        for column in ("Category", "Item", "A", "B", "Difference"):
            grid.add_column(column, overflow="fold")
        for category, changes in diff.grouped().items():
            for index, change in enumerate(changes):
                title = TITLES.get(category, category) if index == 0 else ""
                grid.add_row(
                    title,
                    change.name,
                    change.a or "-",
                    change.b or "-",
                    _what(change),
                    end_section=index == len(changes) - 1,
                )
        console.print(grid)
    for note in diff.notes:
        console.print(f"note: {note}")
    console.print(summary(diff))
    return buffer.getvalue()


def markdown(diff: Diff) -> str:
    """A PR comment: the verdict, then one Markdown table per category."""
    icon = "✅" if diff.equal else "❌"
    lines = [
        f"### {icon} envguard diff",
        "",
        f"- **A**: `{diff.a_label}`",
        f"- **B**: `{diff.b_label}`",
        "",
        f"**{summary(diff)}**",
        "",
    ]
    for category, changes in diff.grouped().items():
        lines += [
            f"#### {TITLES.get(category, category)}",
            "",
            "| Item | A | B | Difference |",
            "|---|---|---|---|",
        ]
        lines += [f"| {_cell(c.name)} | {_cell(c.a)} | {_cell(c.b)} | {_what(c)} |" for c in changes]
        lines.append("")
    lines += [f"> {note}" for note in diff.notes]
    return "\n".join(lines).rstrip("\n") + "\n"


def _cell(text: str | None) -> str:
    return md_escape(text, "—")


def as_json(diff: Diff) -> str:
    return dumps(document(diff.to_dict()))
