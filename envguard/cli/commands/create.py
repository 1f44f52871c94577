"""`envguard create [-f environment.yml | --lock FILE | SPEC ...] [-c CHANNEL ...] [--name NAME | --prefix
DIR] [--backend B] [--jupyter] [--force] [--dry-run] [--no-lock] [--json]`."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import click

from envguard.cli.options import Rule, channel_option, declared, styles
from envguard.create import naming, render
from envguard.create import run as creating
from envguard.engine import backends
from envguard.engine.backends import CHOICES
from envguard.errors import EXIT_OK
from envguard.machine.platform import current_platform
from envguard.output import Style, present, progress_wanted, warn


@declared("create", rules=[Rule("name", "give --name or --prefix, not both", excludes=("prefix",))])
@click.argument("specs", nargs=-1)
@click.option("-f", "--file", "envfile", metavar="FILE", help="Create from this environment.yml.")
@click.option(
    "--lock",
    "lockfile",
    metavar="FILE",
    help="Install exactly this lock (conda-lock.yml, explicit, pixi.lock).",
)
@channel_option("Channel")
@click.option("-n", "--name", help="Environment name (default: the semantic name, see `envguard name`).")
@click.option("-p", "--prefix", metavar="DIR", help="Create at this path instead of conda's envs dir.")
@click.option(
    "--backend",
    type=click.Choice(CHOICES),
    help="conda, mamba, micromamba or embedded (default: $ENVGUARD_BACKEND, else the first tool on PATH, "
    "else embedded).",
)
@click.option("--jupyter", is_flag=True, help="Register a Jupyter kernel named after the environment.")
@click.option("--force", is_flag=True, help="Replace an existing environment of the same name.")
@click.option("--dry-run", is_flag=True, help="Solve and name, but install nothing.")
@click.option("--no-lock", is_flag=True, help="Do not write conda-lock.yml beside the environment.yml.")
@styles(markdown=False, output=False)
def create(
    specs: tuple[str, ...],
    envfile: str | None,
    lockfile: str | None,
    channels: tuple[str, ...],
    name: str | None,
    prefix: str | None,
    backend: str | None,
    jupyter: bool,
    force: bool,
    dry_run: bool,
    no_lock: bool,
    style: Style,
) -> int:
    """Create an environment with a semantic name (pytorch2.1-cuda118-py311) in conda's envs dir."""
    if name:
        naming.validate(name)
    platform = current_platform()
    source = creating.read_source(envfile, lockfile, specs, channels, platform)
    chosen = backends.select(backend, progress=progress_wanted(style))
    target = Path(prefix) if prefix else None
    planned = creating.plan(source, chosen, platform, name=name, prefix=target)
    with ThreadPoolExecutor(max_workers=1) as pool:
        early: list[Future[str]] = []

        def start_table() -> None:  # the human view's package table, rendered while the engine links
            early.append(pool.submit(render.package_table, planned.plan.packages, planned.source.specs))

        result = creating.create(
            planned,
            chosen,
            prefix=target,
            force=force,
            dry_run=dry_run,
            jupyter=jupyter,
            write_lock=not no_lock,
            alongside=start_table if style == "human" else None,
        )
    same = bool(early) and result.packages == planned.plan.packages
    table = _early_table(early[0]) if same else None
    for message in result.warnings:
        warn(message)
    present(render.views(result, table), style, None)
    return EXIT_OK


def _early_table(early: Future[str]) -> str | None:
    """The table rendered ahead, or None where that failed (it is rendered again in this thread, which
    raises the error where it belongs)."""
    return None if early.exception() is not None else early.result()
