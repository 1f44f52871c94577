"""Render `envguard verify`: the JSON body, a rich table of stages, and Markdown for PR comments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envguard.check import relock_command, severity
from envguard.check import render as check_render
from envguard.output import Row, Views, command, console_text, fitted, md_escape, oneline, text_console
from envguard.verify.run import Mismatch, Stage, VerifyResult

_MARK = {"ok": "✅", "failed": "❌", "skipped": "⏭️"}


def to_dict(result: VerifyResult) -> dict[str, Any]:
    return {
        "lock": result.lock,
        "platform": result.platform,
        "passed": result.passed,
        "verdict": result.verdict(),
        "prefix": result.prefix,
        "stages": [_stage(s) for s in result.stages],
        "mismatches": [_mismatch(m) for m in result.mismatches],
        "check": check_render.to_dict(result.check) if result.check is not None else None,
        "smoke": _smoke(result),
        "warnings": list(result.warnings),
        "attestation": _attestation(result),
        "fix": fix_lines(result),
    }


def _smoke(result: VerifyResult) -> dict[str, Any] | None:
    if result.smoke is None:
        return None
    from envguard.smoke import report_dict  # only a verify --smoke has a report (verify.run.smoke_stage)

    return report_dict(result.smoke)


def _attestation(result: VerifyResult) -> dict[str, Any] | None:
    made = result.attestation
    if made is None or made.failed:
        return None
    return {
        "path": str(made.path),
        "signed": made.signed,
        "packages": made.packages,
        "fingerprints": made.fingerprints is not None,
    }


def fix_lines(result: VerifyResult) -> list[str]:
    """What to run when verify failed, built from the failed stage: re-lock when the archives or the rebuilt
    environment no longer match the lock, then verify again."""
    failed = next((s.name for s in result.stages if s.status == "failed"), None)
    if failed not in ("hashes", "check"):
        return []  # fetch/install failures are operational (exit 3, their own message); smoke has its fixes
    envyml = Path(result.lock).parent / "environment.yml"
    source = str(envyml) if envyml.is_file() else "environment.yml"
    why = "if the new archives are intended" if failed == "hashes" else "the lock does not rebuild as written"
    return [
        f"{relock_command(source, result.lock, result.exclude_newer)}   # {why}",
        command("envguard", "verify", "--lock", result.lock),
    ]


def _stage(stage: Stage) -> dict[str, Any]:
    return {
        "name": stage.name,
        "status": stage.status,
        "seconds": round(stage.seconds, 3),
        "detail": stage.detail,
    }


def _mismatch(m: Mismatch) -> dict[str, Any]:
    return {
        "name": m.package.name,
        "version": m.package.version,
        "build": m.package.build,
        "manager": m.package.manager,
        "algorithm": m.algorithm,
        "expected": m.expected,
        "actual": m.actual,
    }


def render(result: VerifyResult) -> str:
    """Human view: the stages, any hash mismatches, the check's drift by category, the verdict; at the
    terminal's width, every cell and line wrapped rather than cut short (each digest whole), the fix commands
    whole."""
    from rich.table import Table

    console = text_console()
    header = fitted([("", f"envguard verify {result.lock} ({result.platform})")], console.width)
    stages = Table(show_edge=False, pad_edge=False)
    for column in ("Stage", "Result", "Time"):
        stages.add_column(column, no_wrap=True)
    stages.add_column("Detail", overflow="fold")
    for stage in result.stages:
        stages.add_row(stage.name, stage.status, f"{stage.seconds:.2f} s", stage.detail)
    console.print(stages)
    rows: list[Row] = []
    if result.mismatches:
        rows.append(("", "Archives that do not match the lock:"))
        for m in result.mismatches:
            rows += [
                ("  ", f"{m.package.name} {m.package.version} {m.package.build} ({m.algorithm})"),
                ("    lock:  ", m.expected),
                ("    found: ", m.actual),
            ]
    rows += _findings(result)
    if result.prefix:
        rows.append(("", f"Rebuilt environment kept at {result.prefix}"))
    rows.append(("", result.verdict()))
    fixes = fix_lines(result)
    if fixes:
        rows += ["How to fix:", *(f"  {line}" for line in fixes)]
    return header + console_text(console) + fitted(rows, console.width)


def _findings(result: VerifyResult) -> list[Row]:
    if result.check is None or result.check.clean:
        return []
    rows: list[Row] = []
    for category, items in result.check.grouped().items():
        rows.append(("", f"{category}:"))
        rows.extend((f"  {severity(f)}: ", oneline(f.message())) for f in items)
    return rows


def markdown(result: VerifyResult) -> str:
    """A PR-comment-sized Markdown report."""
    icon = "✅" if result.passed else "❌"
    lines = [
        f"### {icon} envguard verify: `{oneline(result.lock)}` ({result.platform})",
        "",
        "| Stage | Result | Time | Detail |",
        "|---|---|---|---|",
    ]
    for stage in result.stages:
        detail = md_escape(stage.detail)
        lines.append(
            f"| {stage.name} | {_MARK[stage.status]} {stage.status} | {stage.seconds:.2f} s | {detail} |"
        )
    if result.mismatches:
        lines += [
            "",
            "**Archives that do not match the lock**",
            "",
            "| Package | Expected | Found |",
            "|---|---|---|",
        ]
        lines += [
            f"| `{m.package.name} {m.package.version} {m.package.build}` | `{m.algorithm}:{m.expected}` | "
            f"`{m.actual}` |"
            for m in result.mismatches
        ]
    findings = [row if isinstance(row, str) else "".join(row) for row in _findings(result)]
    if findings:
        lines += ["", "**Drift**", "", "```", *findings, "```"]
    lines += ["", f"**{result.verdict()}**"]
    fixes = fix_lines(result)
    if fixes:
        lines += ["", "**How to fix**", "", "```bash", *fixes, "```"]
    return "\n".join(lines) + "\n"


def views(result: VerifyResult) -> Views:
    return Views(lambda: to_dict(result), lambda: render(result), lambda: markdown(result))
