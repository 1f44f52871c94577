"""`envguard snapshot [SOURCE] [--no-probe] [--platform P] [-o FILE]`: print an environment as envguard
JSON."""

from __future__ import annotations

import click

from envguard.cli.options import valid_platform
from envguard.export.snapshot import snapshot


@click.command("snapshot")
@click.argument("source", required=False)
@click.option("--no-probe", is_flag=True, help="Skip the fingerprint probe (no interpreter is started).")
@click.option(
    "--platform",
    "platform",
    callback=valid_platform,
    help="Platform to read from a multi-platform lock (default: this machine's).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (atomically) instead of stdout."
)
def command(source: str | None, no_probe: bool, platform: str | None, output: str | None) -> int:
    """Print SOURCE (a prefix, name:ENV or any supported file; default: the active environment) as JSON."""
    return snapshot(source, no_probe, platform, output)
