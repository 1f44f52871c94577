"""Render a Diff: a rich table grouped by category, JSON, or Markdown for a PR comment."""

from __future__ import annotations

from typing import Any

from envguard.diff.changes import TITLES, Diff, Difference, sample
from envguard.output import (
    NARROW,
    Views,
    console_text,
    document,
    dumps,
    md_escape,
    oneline,
    terminal_width,
    text_console,
)

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


def _what(change: Difference) -> str:
    if change.kind == "changed" and change.fields and change.fields != ("value",):
        return ", ".join(change.fields)
    return _KIND[change.kind]


def table(diff: Diff, *, width: int | None = None, show_all: bool = False) -> str:
    """Human view: one rich table, a section per category, at the terminal's width (below NARROW columns
    the category becomes a section row instead of a column). A category with more than LONG items shows
    SHOWN of them (`sample`: every kind kept in view) and a one-line count, unless `show_all`."""
    if not diff.changes:
        plain = _plain(diff, width or terminal_width(), show_all)
        if plain is not None:
            return plain
    from rich.table import Table

    console = text_console(width)
    narrow = console.width < NARROW
    console.print(f"A: {oneline(diff.a_label)}\nB: {oneline(diff.b_label)}")
    if diff.changes:
        grid = Table(show_lines=False, expand=False)
        for column in (
            ("Item", "A", "B", "Difference") if narrow else ("Category", "Item", "A", "B", "Difference")
        ):
            grid.add_column(column, overflow="fold")
        for category, changes in diff.grouped().items():
            title = TITLES.get(category, category)
            shown = changes if show_all or len(changes) <= LONG else sample(changes, SHOWN)
            if narrow:
                grid.add_row(title, "", "", "")
            for index, change in enumerate(shown):
                cells = [
                    oneline(change.name),
                    oneline(change.a or "-"),
                    oneline(change.b or "-"),
                    _what(change),
                ]
                if not narrow:
                    cells.insert(0, title if index == 0 else "")
                grid.add_row(*cells, end_section=index == len(shown) - 1)
        console.print(grid)
    for line in summaries(diff, show_all):
        console.print(line, markup=False)
    for note in diff.notes:
        console.print(f"note: {oneline(note)}")
    console.print(summary(diff), markup=False)
    return console_text(console)


def _plain(diff: Diff, width: int, show_all: bool) -> str | None:
    """The table-less report as plain lines, exactly as rich would print them (no rich import: it costs
    more than comparing two identical environments); None when a line would need rich's wrapping."""
    lines = [f"A: {oneline(diff.a_label)}", f"B: {oneline(diff.b_label)}", *summaries(diff, show_all)]
    lines += [f"note: {oneline(note)}" for note in diff.notes] + [summary(diff)]
    if all(len(line) <= width and line.isprintable() and line.isascii() for line in lines):
        return "".join(f"{line}\n" for line in lines)
    return None


LONG = 20  # a category with more items than this is summarised on a long report
SHOWN = 10


def summaries(diff: Diff, show_all: bool = False) -> list[str]:
    """One line per long category: `112 pip packages only in B — 10 shown: a, b, …; --all for the rest`
    (the rows `sample` kept: every kind visible)."""
    if show_all:
        return []
    lines = []
    for category, changes in diff.grouped().items():
        if len(changes) > LONG:
            kinds = ", ".join(f"{n} {_KIND[k]}" for k, n in _counts(changes).items())
            first = ", ".join(oneline(c.name) for c in sample(changes, SHOWN))
            lines.append(
                f"{TITLES.get(category, category)}: {len(changes)} items ({kinds}) — {SHOWN} shown: "
                f"{first}; --all for the rest"
            )
    return lines


def _counts(changes: tuple[Difference, ...]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for change in changes:
        counts[change.kind] = counts.get(change.kind, 0) + 1
    return counts


def markdown(diff: Diff) -> str:
    """A PR comment: the verdict, then one Markdown table per category."""
    icon = "✅" if diff.equal else "❌"
    lines = [
        f"### {icon} envguard diff",
        "",
        f"- **A**: `{oneline(diff.a_label)}`",
        f"- **B**: `{oneline(diff.b_label)}`",
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
    lines += [f"> {md_escape(note)}" for note in diff.notes]
    return "\n".join(lines).rstrip("\n") + "\n"


def _cell(text: str | None) -> str:
    return md_escape(text, "—")


def to_dict(diff: Diff) -> dict[str, Any]:
    """The JSON body: both sides, the mode, the verdict, each category's differences and the notes."""
    return {
        "a": diff.a_label,
        "b": diff.b_label,
        "mode": diff.mode,
        "equal": diff.equal,
        "changes": {
            category: [
                # a, b and fields: the layout before the structured keys, kept for one release
                {**c.structured(), "message": c.message(), "a": c.a, "b": c.b, "fields": list(c.fields)}
                for c in items
            ]
            for category, items in diff.grouped().items()
        },
        "notes": list(diff.notes),
    }


def as_json(diff: Diff) -> str:
    return dumps(document(to_dict(diff)))


def views(diff: Diff, *, show_all: bool = False) -> Views:
    return Views(lambda: to_dict(diff), lambda: table(diff, show_all=show_all), lambda: markdown(diff))
