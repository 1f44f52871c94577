"""`envguard check --files`: every installed file against the hash and size its package recorded
(envguard.prefix.integrity), as check's differences, with the pip lines that reinstall what pip installed
(envguard.check.fixes decides where they apply)."""

from __future__ import annotations

from pathlib import Path

from envguard.check.fixes import pip_reinstall_command
from envguard.diff import Difference
from envguard.errors import BadInputError
from envguard.prefix.integrity import verify_files
from envguard.prefix.probe import interpreter


def file_findings(prefix: Path) -> tuple[list[Difference], list[str], list[str]]:
    """Altered and missing files (envguard.prefix.integrity) as findings."""
    result = verify_files(prefix)
    findings = [
        Difference("files", p.problem, p.path, text=f"{p.path} ({p.package}): {p.problem}{_detail(p.detail)}")
        for p in result.problems
    ]
    notes = (
        [f"{result.unverified} file(s) rewritten at install time could not be verified"]
        if result.unverified
        else []
    )

    pip = [p.package for p in result.problems if p.package.endswith(" (pip)")]
    return findings, notes, [pip_reinstall_command(_python(prefix), pip)] if pip else []


def _python(prefix: Path) -> str:
    try:
        return str(interpreter(prefix))
    except BadInputError:
        return str(prefix / "bin" / "python")


def _detail(detail: str) -> str:
    return f" ({detail})" if detail else ""
