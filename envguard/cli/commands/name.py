"""`envguard name [SOURCE] [-c CHANNEL ...] [--no-solve] [--backend B] [--json]`: the semantic name a source
gets."""

from __future__ import annotations

import click

from envguard.cli.options import channel_option, declared, styles
from envguard.create import render
from envguard.create.named import name_of
from envguard.engine.backends import CHOICES
from envguard.errors import EXIT_OK
from envguard.output import Style, present, warn


@declared("name")
@click.argument("source", required=False)
@channel_option("Channel for solving an environment.yml")
@click.option(
    "--no-solve", is_flag=True, help="environment.yml: name from the specs alone (no channels needed)."
)
@click.option("--backend", type=click.Choice(CHOICES), help="Backend used to solve an environment.yml.")
@styles(markdown=False, output=False)
def name(
    source: str | None, channels: tuple[str, ...], no_solve: bool, backend: str | None, style: Style
) -> int:
    """Print the name `envguard create` would give SOURCE (environment.yml, lock, prefix, name:ENV; default:
    the active environment), e.g. pytorch2.1-cuda118-py311."""
    named = name_of(source, channels, solve=not no_solve, backend=backend)
    for message in named.warnings:
        warn(message)
    present(render.name_views(named), style, None)
    return EXIT_OK
