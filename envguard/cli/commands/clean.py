"""`envguard clean`: a dry run by default; `--yes` moves unused cache content to a trash folder inside each
cache, `--undo` restores the last run, `--purge-trash` deletes the trash for good."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click

from envguard.clean.model import CATEGORIES, Category
from envguard.clean.run import clean, trash_action
from envguard.clean.survey import Request
from envguard.cli.options import output_style
from envguard.errors import UsageError
from envguard.output import Style, Views, present, progress_wanted

_PATH = click.Path(path_type=Path)


@click.command("clean")
@click.option(
    "--cache",
    "caches",
    multiple=True,
    type=_PATH,
    help=(
        "Clean only this package cache (repeatable). Default: every cache of conda, mamba, rattler and pixi."
    ),
)
@click.option(
    "--env",
    "envs",
    multiple=True,
    type=_PATH,
    help="Also protect what this environment prefix uses (repeatable); envs dirs are always read.",
)
@click.option(
    "--pixi-root",
    "pixi_roots",
    multiple=True,
    type=_PATH,
    help="Protect pixi environments (.pixi/envs/*) of the projects in this folder (repeatable).",
)
@click.option(
    "--keep-locked",
    "keep_locked",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Keep every package this lock names (conda-lock.yml, explicit spec, pixi.lock; repeatable).",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    type=click.Choice(CATEGORIES),
    help="Clean only these categories (repeatable).",
)
@click.option("--yes", "yes", is_flag=True, help="Do it: move what the dry run lists to the trash.")
@click.option("--undo", "undo", is_flag=True, help="Put back everything the last `--yes` run moved.")
@click.option("--purge-trash", "purge_trash", is_flag=True, help="Delete the trash folders for good.")
@click.option("-v", "--verbose", is_flag=True, help="List every item, not the first 10 of each category.")
@output_style(markdown=False)
def command(
    caches: tuple[Path, ...],
    envs: tuple[Path, ...],
    pixi_roots: tuple[Path, ...],
    keep_locked: tuple[Path, ...],
    only: tuple[str, ...],
    yes: bool,
    undo: bool,
    purge_trash: bool,
    verbose: bool,
    style: Style,
    output: str | None,
) -> int:
    """Safely clean package caches: only what no environment and no --keep-locked lock uses (dry run by
    default)."""
    if sum((yes, undo, purge_trash)) > 1:
        raise UsageError("--yes, --undo and --purge-trash are different actions; give one of them")
    request = Request(
        caches=caches,
        envs=envs,
        pixi_roots=pixi_roots,
        keep_locked=keep_locked,
        only=cast(tuple[Category, ...], only),
        progress=progress_wanted(style),
    )
    if undo or purge_trash:
        outcome = trash_action(request, "undo" if undo else "purge-trash")
    else:
        outcome = clean(request, yes=yes, verbose=verbose)
    present(Views(outcome.data, outcome.human), style, output)
    return outcome.exit_code
