"""Render `envguard create` / `envguard name`: the JSON body and a rich summary with a package table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envguard.channels import strip_credentials
from envguard.create.named import Named
from envguard.create.run import CreateResult
from envguard.model import Package
from envguard.output import Views, console_text, oneline, text_console
from envguard.specs import spec_name

MAX_ROWS = 30


def to_dict(result: CreateResult) -> dict[str, Any]:
    """The JSON document (credential-free channels and URLs)."""
    return {
        "name": result.name,
        "prefix": result.prefix,
        "backend": result.backend,
        "platform": result.platform,
        "dry_run": result.dry_run,
        "replaced": result.replaced,
        "registered": result.registered,
        "lock": result.lock,
        "kernelspec": result.kernelspec,
        "channels": [strip_credentials(c) for c in result.channels],
        "requested": list(result.requested),
        "packages": [_package(p) for p in result.packages],
        "warnings": list(result.warnings),
    }


def _package(package: Package) -> dict[str, Any]:
    return {
        "manager": package.manager,
        "name": package.name,
        "version": package.version,
        "build": package.build,
        "channel": strip_credentials(package.channel),
    }


def render(result: CreateResult, table: str | None = None) -> str:
    """Human view: what was (or would be) created, the packages by channel, and what to do next. `table`: the
    package table already rendered (`package_table`) for exactly these packages."""
    console = text_console()
    verb = "Would create" if result.dry_run else ("Replaced" if result.replaced else "Created")
    console.print(f"{verb} {oneline(result.name)} at {oneline(result.prefix)}")
    console.print(f"backend {result.backend}, platform {result.platform}, {len(result.packages)} package(s)")
    console.file.write(package_table(result.packages, result.requested) if table is None else table)
    shown = min(MAX_ROWS, len(result.packages))
    if shown < len(result.packages):
        console.print(f"... and {len(result.packages) - shown} more package(s); --json lists them all")
    for line in _next_steps(result):
        console.print(oneline(line))
    return console_text(console)


def views(result: CreateResult, table: str | None = None) -> Views:
    return Views(lambda: to_dict(result), lambda: render(result, table))


def name_views(named: Named) -> Views:
    """`envguard name`: the name alone, or `{source, name}`."""
    return Views(lambda: {"source": named.source, "name": named.name}, lambda: named.name + "\n")


def package_table(packages: Sequence[Package], requested: Sequence[str]) -> str:
    """The table of at most MAX_ROWS packages (the requested ones first) by channel, rendered: `envguard
    create` renders it while the engine links."""
    from rich.table import Table

    console = text_console()
    table = Table(show_edge=False, pad_edge=False)
    for column in ("Package", "Version", "Build"):
        table.add_column(column)
    by_channel: dict[str, list[Package]] = {}
    for package in sorted(_shown(packages, requested), key=lambda p: p.name):
        by_channel.setdefault(strip_credentials(package.channel) or package.manager, []).append(package)
    for channel in sorted(by_channel):
        table.add_row(oneline(channel), "", "")
        for package in by_channel[channel]:
            table.add_row(f"  {oneline(package.name)}", oneline(package.version), oneline(package.build))
    console.print(table)
    return console_text(console)


def _shown(packages: Sequence[Package], requested: Sequence[str]) -> list[Package]:
    """At most MAX_ROWS packages for the table: the requested ones first."""
    asked = {spec_name(s) for s in requested}
    ordered = sorted(packages, key=lambda p: (p.name not in asked, p.name))
    return ordered[:MAX_ROWS]


def _next_steps(result: CreateResult) -> list[str]:
    if result.dry_run:
        return ["Dry run: nothing was installed."]
    lines = []
    if result.registered:
        lines.append("Registered in ~/.conda/environments.txt (conda env list shows it).")
    if result.lock:
        lines.append(f"Lock written: {result.lock}")
    if result.kernelspec:
        lines.append(f"Jupyter kernel: {result.kernelspec}")
    lines.append(f"Activate with: conda activate {result.prefix}")
    return lines
