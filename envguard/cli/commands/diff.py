"""`envguard diff A B [--platform P] [--probe] [--json | --markdown]`: two-way, grouped; exit 0 equal, 1
different."""

from __future__ import annotations

import click

from envguard.cli.options import declared, platform_option, styles
from envguard.diff import render
from envguard.diff.run import diff_sources
from envguard.errors import EXIT_DRIFT, EXIT_OK
from envguard.output import Style, present, warn
from envguard.textio import gc_paused


@declared("diff")
@click.argument("a")
@click.argument("b")
@platform_option("Platform entry to read from conda-lock.yml / pixi.lock (default: this machine's).")
@click.option(
    "--probe", is_flag=True, help="Run the fingerprint probe in live environments (compares RNG streams)."
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="List every item of a long category (default: 10 of them, every kind in view).",
)
@styles()
def diff(
    a: str, b: str, platform: str | None, probe: bool, show_all: bool, style: Style, output: str | None
) -> int:
    """Compare A with B: each a prefix, name:ENV, environment.yml, conda-lock.yml, explicit, pixi.lock or
    snapshot."""
    with gc_paused():  # the whole diff: as envguard.textio.gc_paused says
        result, warnings = diff_sources(a, b, platform=platform, probe=probe)
        for message in warnings:
            warn(message)
        present(render.views(result, show_all=show_all), style, output)
    return EXIT_OK if result.equal else EXIT_DRIFT
