"""`envguard diff A B [--platform P] [--probe] [--json | --markdown]`: two-way, grouped; exit 0 equal, 1
different."""

from __future__ import annotations

import click

from envguard.cli.options import output_style, valid_platform
from envguard.output import Style


@click.command("diff")
@click.argument("a")
@click.argument("b")
@click.option(
    "--platform",
    callback=valid_platform,
    help="Platform entry to read from conda-lock.yml / pixi.lock (default: this machine's).",
)
@click.option(
    "--probe", is_flag=True, help="Run the fingerprint probe in live environments (compares RNG streams)."
)
@click.option(
    "--all", "show_all", is_flag=True, help="List every item of a long category (default: the first 10)."
)
@output_style()
def command(
    a: str, b: str, platform: str | None, probe: bool, show_all: bool, style: Style, output: str | None
) -> int:
    """Compare A with B: each a prefix, name:ENV, environment.yml, conda-lock.yml, explicit, pixi.lock or
    snapshot."""
    from envguard.diff.run import main

    return main(a, b, platform=platform, probe=probe, show_all=show_all, style=style, output=output)
