"""`envguard clean`: a dry run by default; `--yes` moves unused cache content to a trash folder inside each
cache, `--undo` restores the last run, `--purge-trash` deletes the trash for good."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click

from envguard.clean import render
from envguard.clean.model import CATEGORIES, Category
from envguard.clean.plan import keep_recent_seconds
from envguard.clean.run import clean as clean_caches
from envguard.clean.run import trash_action
from envguard.clean.survey import CleanRequest
from envguard.cli.options import converted, declared, styles
from envguard.output import Style, present, progress_wanted

PATHS = click.Path(path_type=Path)


@declared("clean", alternatives=[("--yes", "--undo", "--purge-trash")])
@click.option(
    "--cache",
    "caches",
    multiple=True,
    type=PATHS,
    help="Clean only this package cache (repeatable). Default: every cache of conda, mamba, rattler and "
    "pixi.",
)
@click.option(
    "--env",
    "envs",
    multiple=True,
    type=PATHS,
    help="Also protect what this environment prefix uses (repeatable); envs dirs are always read.",
)
@click.option(
    "--pixi-root",
    "pixi_roots",
    multiple=True,
    type=PATHS,
    help="Protect pixi environments (.pixi/envs/*) of the projects in this folder (repeatable).",
)
@click.option(
    "--keep-locked",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep every package this lock names (conda-lock.yml, explicit spec, pixi.lock; repeatable).",
)
@click.option(
    "--only", multiple=True, type=click.Choice(CATEGORIES), help="Clean only these categories (repeatable)."
)
@click.option(
    "--keep-recent",
    metavar="DURATION",
    default="1h",
    show_default=True,
    callback=converted(keep_recent_seconds),
    help="Keep what a cache got more recently than this (30m, 2h, 1d): a running conda may still be "
    "linking it. 0 keeps nothing back.",
)
@click.option("--yes", is_flag=True, help="Do it: move what the dry run lists to the trash.")
@click.option("--undo", is_flag=True, help="Put back everything the last `--yes` run moved.")
@click.option("--purge-trash", is_flag=True, help="Delete the trash folders for good.")
@click.option("-v", "--verbose", is_flag=True, help="List every item, not the first 10 of each category.")
@styles(markdown=False)
def clean(
    caches: tuple[Path, ...],
    envs: tuple[Path, ...],
    pixi_roots: tuple[Path, ...],
    keep_locked: tuple[Path, ...],
    only: tuple[str, ...],
    keep_recent: float,
    yes: bool,
    undo: bool,
    purge_trash: bool,
    verbose: bool,
    style: Style,
    output: str | None,
) -> int:
    """Safely clean package caches: only what no environment and no --keep-locked lock uses (dry run by
    default)."""
    request = CleanRequest(
        caches=caches,
        envs=envs,
        pixi_roots=pixi_roots,
        keep_locked=keep_locked,
        only=cast(tuple[Category, ...], only),
        progress=progress_wanted(style),
        keep_recent=keep_recent,
    )
    if undo or purge_trash:
        outcome = trash_action(request, "undo" if undo else "purge-trash")
    else:
        outcome = clean_caches(request, yes=yes)
    present(render.views(outcome, verbose=verbose), style, output)
    return outcome.exit_code
