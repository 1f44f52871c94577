"""Render a CheckReport: plain lines grouped by category ending in a one-line verdict, JSON, or Markdown.

Plain text on purpose: `envguard check` runs before every training job and in hooks, so its human view must
not pay for rich's import.
"""

from __future__ import annotations

from envguard.check.report import CHECK_TITLES, CheckReport, Difference

LONG = 20  # a category with more findings is summarised: the first SHOWN, then one line for the rest
SHOWN = 10
_KIND_WORDS = {"only-a": "not installed", "only-b": "installed, not in the target", "changed": "changed"}


def human(report: CheckReport, *, cached: bool = False, show_all: bool = False) -> str:
    """One line per finding under its category title (a long category: the first SHOWN and a one-line
    summary, unless `show_all`), then notes, then the verdict and how to fix."""
    lines: list[str] = []
    for category, findings in report.grouped().items():
        title = CHECK_TITLES.get(category, category)
        lines.append(title)
        shown = findings if show_all or len(findings) <= LONG else findings[:SHOWN]
        lines.extend(f"  [{f.severity}] {f.message}" for f in shown)
        if len(shown) < len(findings):
            lines.append(f"  ... {_summary(title, findings)}; first {SHOWN} shown, --all for the rest")
    if report.notes:
        lines.append("Notes")
        lines.extend(f"  {note}" for note in report.notes)
    lines.append(report.verdict() + (" (unchanged since the last full check)" if cached else ""))
    if report.fixes and not report.clean:
        lines.append("How to fix:")
        lines.extend(f"  {command}" for command in report.fixes)
    return "\n".join(lines) + "\n"


def _summary(title: str, findings: tuple[Difference, ...]) -> str:
    """`112 pip packages (112 installed, not in the target)`."""
    counts: dict[str, int] = {}
    for finding in findings:
        word = _KIND_WORDS.get(finding.kind or "", finding.kind or finding.severity)
        counts[word] = counts.get(word, 0) + 1
    parts = ", ".join(f"{n} {word}" for word, n in counts.items())
    return f"{len(findings)} {title[:1].lower() + title[1:]} ({parts})"


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
