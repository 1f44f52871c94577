"""Render a CheckReport: plain lines grouped by category ending in a one-line verdict, JSON, or Markdown.

Plain text on purpose: `envguard check` runs before every training job and in hooks, so its human view must
not pay for rich's import.
"""

from __future__ import annotations

from typing import Any, Literal

from envguard.check.report import CHECK_TITLES, CheckReport, severity
from envguard.diff import Difference, sample
from envguard.output import Row, Views, as_printed, document, dumps, fitted, line_width, md_escape, oneline

LONG = 20  # a category with more findings is summarised: SHOWN of them, then one line for the rest
SHOWN = 10
_KIND_WORDS = {"only-a": "not installed", "only-b": "installed, not in the target", "changed": "changed"}


def human(
    report: CheckReport,
    *,
    cached: bool = False,
    show_all: bool = False,
    width: int | Literal["terminal"] | None = "terminal",
) -> str:
    """One line per finding under its category title (a long category: SHOWN of them, every kind kept in
    view, and a one-line summary, unless `show_all`), then notes, then the verdict and how to fix. Lines wrap
    at `width` columns (default: envguard.terminal.line_width, None for a pipe) under their text; the fix
    commands stay whole."""
    rows: list[Row] = []
    for category, findings in report.grouped().items():
        title = CHECK_TITLES.get(category, category)
        rows.append(("", title))
        shown = findings if show_all or len(findings) <= LONG else sample(findings, SHOWN)
        rows.extend((f"  [{severity(f)}] ", oneline(f.message())) for f in shown)
        if len(shown) < len(findings):
            rows.append(("  ... ", f"{_summary(title, findings)}; {SHOWN} shown, --all for the rest"))
    if report.notes:
        rows.append(("", "Notes"))
        rows.extend(("  ", oneline(note)) for note in report.notes)
    rows.append(
        ("", oneline(report.verdict()) + (" (unchanged since the last full check)" if cached else ""))
    )
    if report.fixes and not report.clean:
        rows.append("How to fix:")
        rows.extend(f"  {oneline(command)}" for command in report.fixes)
    return fitted(rows, line_width() if width == "terminal" else width)


def _summary(title: str, findings: tuple[Difference, ...]) -> str:
    """`112 pip packages (112 installed, not in the target)`."""
    counts: dict[str, int] = {}
    for finding in findings:
        word = _KIND_WORDS.get(finding.kind, finding.kind or severity(finding))
        counts[word] = counts.get(word, 0) + 1
    parts = ", ".join(f"{n} {word}" for word, n in counts.items())
    return f"{len(findings)} {title[:1].lower() + title[1:]} ({parts})"


def markdown(report: CheckReport) -> str:
    """A PR comment: verdict heading, a section per category, bullet per finding."""
    icon = "✅" if report.clean else "❌"
    lines = [f"### {icon} envguard check", "", f"**{md_escape(report.verdict())}**", ""]
    for category, findings in report.grouped().items():
        lines.append(f"#### {CHECK_TITLES.get(category, category)}")
        lines.extend(f"- {'⚠️ ' if severity(f) == 'drift' else ''}{md_escape(f.message())}" for f in findings)
        lines.append("")
    if report.notes:
        lines.append("#### Notes")
        lines.extend(f"- {md_escape(note)}" for note in report.notes)
        lines.append("")
    if report.fixes and not report.clean:
        lines += ["#### How to fix", "", "```bash", *map(oneline, report.fixes), "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def to_dict(report: CheckReport) -> dict[str, Any]:
    """The JSON body: target, live, the verdict, the findings by category, notes, the fix commands and the
    warnings (also printed on stderr)."""
    return {
        "target": report.target,
        "live": report.live,
        "clean": report.clean,
        "verdict": report.verdict(),
        "findings": {category: [_finding(f) for f in items] for category, items in report.grouped().items()},
        "notes": list(report.notes),
        "fix": [] if report.clean else list(report.fixes),
        "warnings": list(report.warnings),
    }


def _finding(difference: Difference) -> dict[str, Any]:
    """`{category, name, field, expected, actual, kind, message, severity}`."""
    data = difference.structured()
    data.pop("values", None)
    return {**data, "message": difference.message(), "severity": severity(difference)}


def as_json(report: CheckReport) -> str:
    """The JSON every envguard command prints (envguard.output.dumps)."""
    return dumps(document(to_dict(report)))


def views(report: CheckReport, *, show_all: bool = False) -> Views:
    return Views(lambda: to_dict(report), lambda: human(report, show_all=show_all), lambda: markdown(report))


def all_styles(report: CheckReport, *, cached: bool = False) -> dict[str, str]:
    """Every output style at once, as printed (the fast path stores them all for the next unchanged check and
    writes them as they are): the human view whole (for a pipe) and, where it wraps at this terminal's
    width, as wrapped under `human@WIDTH` (envguard.check.fast picks the one that fits)."""
    outputs = {
        "human": human(report, cached=cached, width=None),
        "json": as_json(report),
        "markdown": markdown(report),
    }
    width = line_width()
    if width is not None:
        wrapped = human(report, cached=cached, width=width)
        if wrapped != outputs["human"]:
            outputs[f"human@{width}"] = wrapped
    return {style: as_printed(text) for style, text in outputs.items()}
