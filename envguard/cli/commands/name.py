"""`envguard name [SOURCE] [-c CHANNEL ...] [--no-solve] [--backend B] [--json]`: the semantic name a source
gets."""

from __future__ import annotations

from pathlib import Path

import click

from envguard.cli.options import output_style
from envguard.engine.backends import CHOICES
from envguard.errors import EXIT_OK
from envguard.output import Style, Views, present, warn


@click.command("name")
@click.argument("source", required=False)
@click.option(
    "-c",
    "--channel",
    "channels",
    multiple=True,
    metavar="CHANNEL",
    help="Channel for solving an environment.yml (repeatable; before the file's own).",
)
@click.option(
    "--no-solve", is_flag=True, help="environment.yml: name from the specs alone (no channels needed)."
)
@click.option("--backend", type=click.Choice(CHOICES), help="Backend used to solve an environment.yml.")
@output_style(markdown=False, output=False)
def command(
    source: str | None, channels: tuple[str, ...], no_solve: bool, backend: str | None, style: Style
) -> int:
    """Print the name `envguard create` would give SOURCE (environment.yml, lock, prefix, name:ENV; default:
    the active environment), e.g. pytorch2.1-cuda118-py311."""
    from envguard.create import naming

    path = Path(source) if source else None
    if path is not None and path.is_file() and _is_environment_yml(path) and not no_solve:
        name, warnings = _solved_name(path, channels, backend)
    else:
        from envguard.sources import load

        env = load(source, detect_virtual=False)
        name, warnings = naming.semantic_name(env), list(env.warnings)
    for message in warnings:
        warn(message)
    present(Views(lambda: {"source": source, "name": name}, lambda: name + "\n"), style, None)
    return EXIT_OK


def _is_environment_yml(path: Path) -> bool:
    from envguard.formats import detect_kind

    return detect_kind(path) == "environment.yml"


def _solved_name(path: Path, channels: tuple[str, ...], backend: str | None) -> tuple[str, list[str]]:
    """Exactly what `envguard create -f` would name it: solved for this machine, with the same backend."""
    from envguard.create import run as create
    from envguard.engine import backends
    from envguard.machine.platform import current_platform

    platform = current_platform()
    source = create.read_source(str(path), None, (), channels, platform)
    planned = create.plan(source, backends.select(backend), platform)
    return planned.name, list(planned.warnings)
