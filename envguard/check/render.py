"""Render a CheckReport: plain lines grouped by category ending in a one-line verdict, JSON, or Markdown.

Plain text on purpose: `envguard check` runs before every training job and in hooks, so its human view must
not pay for rich's import.
"""

from __future__ import annotations

from envguard.check.report import CHECK_TITLES, CheckReport


def human(report: CheckReport, *, cached: bool = False) -> str:
    """One line per finding under its category title, then notes, then the verdict."""
    lines: list[str] = []
    for category, findings in report.grouped().items():
        lines.append(CHECK_TITLES.get(category, category))
        lines.extend(f"  [{f.severity}] {f.message}" for f in findings)
    if report.notes:
        lines.append("Notes")
        lines.extend(f"  {note}" for note in report.notes)
    lines.append(report.verdict() + (" (unchanged since the last full check)" if cached else ""))
    if report.fixes and not report.clean:
        lines.append("How to fix:")
        lines.extend(f"  {command}" for command in report.fixes)
    return "\n".join(lines) + "\n"


def markdown(report: CheckReport) -> str:
    """A PR comment: verdict heading, a section per category, bullet per finding."""
    icon = "✅" if report.clean else "❌"
    lines = [f"### {icon} envguard check", "", f"**{report.verdict()}**", ""]
    for category, findings in report.grouped().items():
        lines.append(f"#### {CHECK_TITLES.get(category, category)}")
        lines.extend(f"- {'⚠️ ' if f.severity == 'drift' else ''}{_md(f.message)}" for f in findings)
        lines.append("")
    if report.notes:
        lines.append("#### Notes")
        lines.extend(f"- {_md(note)}" for note in report.notes)
        lines.append("")
    if report.fixes and not report.clean:
        lines += ["#### How to fix", "", "```bash", *report.fixes, "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _md(text: str) -> str:
    from envguard.output import md_escape

    return md_escape(text)


def as_json(report: CheckReport) -> str:
    """The JSON every envguard command prints (envguard.output.dumps)."""
    from envguard.output import document, dumps

    return dumps(document(report.to_dict()))
