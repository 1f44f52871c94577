"""`envguard snapshot [SOURCE] [--no-probe] [--platform P] [-o FILE]`: print an environment as envguard
JSON."""

from __future__ import annotations

import click

from envguard.cli.options import declared, platform_option
from envguard.errors import EXIT_OK
from envguard.export.snapshot import snapshot as read
from envguard.model import to_dict
from envguard.output import dumps, emit, warn


@declared("snapshot")
@click.argument("source", required=False)
@click.option("--no-probe", is_flag=True, help="Skip the fingerprint probe (no interpreter is started).")
@platform_option("Platform to read from a multi-platform lock (default: this machine's).")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (atomically) instead of stdout."
)
def snapshot(source: str | None, no_probe: bool, platform: str | None, output: str | None) -> int:
    """Print SOURCE (a prefix, name:ENV or any supported file; default: the active environment) as JSON."""
    env = read(source, probe=not no_probe, platform=platform)
    for message in env.warnings:
        warn(message)
    emit(dumps(to_dict(env)), output)
    return EXIT_OK
