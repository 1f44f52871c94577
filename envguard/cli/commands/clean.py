"""`envguard clean`: a dry run by default; `--yes` moves unused cache content to a trash folder inside each
cache, `--undo` restores the last run, `--purge-trash` deletes the trash for good."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from envguard.clean import render
from envguard.clean.model import CATEGORIES, Category
from envguard.clean.run import clean, trash_action
from envguard.clean.survey import CleanRequest
from envguard.cli.grammar import Command, Opt, styles
from envguard.output import Style, present, progress_wanted

GRAMMAR = Command(
    "clean",
    options=[
        Opt(
            "--cache",
            dest="caches",
            many=True,
            kind="path",
            as_path=True,
            help="Clean only this package cache (repeatable). Default: every cache of conda, mamba, rattler "
            "and pixi.",
        ),
        Opt(
            "--env",
            dest="envs",
            many=True,
            kind="path",
            as_path=True,
            help="Also protect what this environment prefix uses (repeatable); envs dirs are always read.",
        ),
        Opt(
            "--pixi-root",
            dest="pixi_roots",
            many=True,
            kind="path",
            as_path=True,
            help="Protect pixi environments (.pixi/envs/*) of the projects in this folder (repeatable).",
        ),
        Opt(
            "--keep-locked",
            many=True,
            kind="path",
            as_path=True,
            dir_okay=False,
            help="Keep every package this lock names (conda-lock.yml, explicit spec, pixi.lock; repeatable).",
        ),
        Opt("--only", many=True, choices=CATEGORIES, help="Clean only these categories (repeatable)."),
        Opt("--yes", flag=True, help="Do it: move what the dry run lists to the trash."),
        Opt("--undo", flag=True, help="Put back everything the last `--yes` run moved."),
        Opt("--purge-trash", flag=True, help="Delete the trash folders for good."),
        Opt("-v", "--verbose", flag=True, help="List every item, not the first 10 of each category."),
        *styles(markdown=False),
    ],
    exclusive=[("--yes", "--undo", "--purge-trash")],
)


def run(
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
    request = CleanRequest(
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
        outcome = clean(request, yes=yes)
    present(render.views(outcome, verbose=verbose), style, output)
    return outcome.exit_code
