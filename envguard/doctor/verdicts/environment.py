"""Doctor's verdict on the environment's files against conda-meta (pure)."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.prefix.integrity import IntegrityReport

SHOWN_PROBLEMS = 5

CORRUPT_FIX = (
    "reinstall the package whose record is named (`conda install --force-reinstall -p PREFIX NAME`), or "
    "remove that file; then run envguard doctor again"
)


def health_findings(report: IntegrityReport | None, note: str, unreadable: bool = False) -> list[Finding]:
    """The environment's files against conda-meta; `unreadable`: its records could not be read (`note` names
    the file), which conda itself trips over too."""
    if report is None and unreadable:
        return [Finding("environment", "files", "FAIL", f"files not checked: {note}", CORRUPT_FIX)]
    if report is None:
        return [
            Finding(
                "environment", "files", "INFO", note or "not checked", "point SOURCE at a conda environment"
            )
        ]
    grouped = report.by_package()
    if not grouped:
        extra = (
            f"; {report.unverified} rewritten at install could not be verified" if report.unverified else ""
        )
        return [
            Finding(
                "environment",
                "files",
                "PASS",
                f"all {report.files} files of {report.packages} packages match conda-meta{extra}",
            )
        ]
    missing = sum(1 for p in report.problems if p.problem == "missing")
    altered = len(report.problems) - missing
    shown = "; ".join(
        f"{pkg}: {items[0].path} {items[0].problem}" + (f" (+{len(items) - 1})" if len(items) > 1 else "")
        for pkg, items in list(grouped.items())[:SHOWN_PROBLEMS]
    )
    names = " ".join(sorted({pkg.rsplit("-", 2)[0] for pkg in grouped}))
    return [
        Finding(
            "environment",
            "files",
            "FAIL",
            f"{len(grouped)} package(s) with {missing} missing and {altered} altered file(s): {shown}",
            f"reinstall them: `conda install --force-reinstall -p {report.prefix} {names}` "
            "(or recreate the environment from its lock)",
        )
    ]
