"""Findings: one checked fact with a verdict, the evidence behind it and what to do (shared by doctor and smoke)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

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
    """1 when any finding FAILs, else 0."""
    return 1 if worst(findings) == "FAIL" else 0


def human_bytes(value: float | None) -> str:
    """`1.5 GiB`-style sizes for evidence strings."""
    if value is None:
        return "unknown"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"
