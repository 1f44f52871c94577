"""`envguard check --files`: every installed file against the hash and size its package recorded
(envguard.prefix.integrity), as check's differences, with the commands that reinstall what was altered."""

from __future__ import annotations

from pathlib import Path

from envguard.check.fixes import reinstall_command
from envguard.diff.changes import Difference
from envguard.errors import BadInputError
from envguard.output import command
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

    conda = [p.package for p in result.problems if not p.package.endswith(" (pip)")]
    pip = [p.package for p in result.problems if p.package.endswith(" (pip)")]
    fixes = [reinstall_command(str(prefix), conda)] if conda else []
    return findings, notes, fixes + ([pip_reinstall_command(prefix, pip)] if pip else [])


def pip_reinstall_command(prefix: Path, labels: list[str]) -> str:
    """pip packages (`name version (pip)` labels) whose files were altered or removed: reinstall them."""
    try:
        python = str(interpreter(prefix))
    except BadInputError:
        python = str(prefix / "bin" / "python")
    pins = ["==".join(label.split()[:2]) for label in dict.fromkeys(labels)]
    return command(python, "-m", "pip", "install", "--force-reinstall", "--no-deps", *pins)


def _detail(detail: str) -> str:
    return f" ({detail})" if detail else ""
