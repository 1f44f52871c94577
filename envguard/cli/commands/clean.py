"""`envguard clean`: a dry run by default; `--yes` moves unused cache content to a trash folder inside each cache,
`--undo` restores the last run, `--purge-trash` deletes the trash for good."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click

from envguard.clean import discovery, execute, locks
from envguard.clean.model import CATEGORIES, Category
from envguard.clean.survey import Request, discover, plan_for
from envguard.clean.usage import analyse
from envguard.errors import EXIT_OK, EXIT_OPERATIONAL, UsageError
from envguard.output import dumps, emit

_PATH = click.Path(path_type=Path)


@click.command("clean")
@click.option(
    "--cache",
    "caches",
    multiple=True,
    type=_PATH,
    help="Clean only this package cache (repeatable). Default: every cache of conda, mamba, rattler and pixi.",
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
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema_version 1) instead of tables.")
@click.option("-v", "--verbose", is_flag=True, help="List every item, not the first 10 of each category.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the report to FILE (atomically)."
)
def command(
    caches: tuple[Path, ...], envs: tuple[Path, ...], pixi_roots: tuple[Path, ...], keep_locked: tuple[Path, ...],
    only: tuple[str, ...], yes: bool, undo: bool, purge_trash: bool, as_json: bool, verbose: bool, output: str | None,
) -> int:  # fmt: skip
    """Safely clean package caches: only what no environment and no --keep-locked lock uses (dry run by default)."""
    if sum((yes, undo, purge_trash)) > 1:
        raise UsageError("--yes, --undo and --purge-trash are different actions; give one of them")
    request = Request(caches=caches, envs=envs, pixi_roots=pixi_roots, keep_locked=keep_locked,
                      only=cast(tuple[Category, ...], only))  # fmt: skip
    if undo or purge_trash:
        return _trash_action(request, "undo" if undo else "purge-trash", as_json, output)
    return _clean(request, yes, as_json, verbose, output)


def _clean(request: Request, yes: bool, as_json: bool, verbose: bool, output: str | None) -> int:
    from envguard.clean.render import plan_to_dict, render_plan

    caches, envs, notes = discover(request)
    usage = analyse(envs, request.keep_locked)
    if not yes:
        plan = plan_for(caches, usage, only=request.only, notes=notes)
        emit(
            dumps(plan_to_dict(plan, "dry-run"))
            if as_json
            else render_plan(plan, "dry-run", verbose=verbose),
            output,
        )
        return EXIT_OK
    with locks.hold(caches):
        plan = plan_for(caches, usage, only=request.only, notes=notes)
        result = execute.move_to_trash(plan, caches, execute.new_run_id())
    text = (
        dumps(plan_to_dict(plan, "clean", result))
        if as_json
        else render_plan(plan, "clean", result=result, verbose=verbose)
    )
    emit(text, output)
    return EXIT_OPERATIONAL if result.failed else EXIT_OK


def _trash_action(request: Request, action: str, as_json: bool, output: str | None) -> int:
    from envguard.clean.render import render_result, result_to_dict

    info, _notes = discovery.conda_info()
    caches, _skipped = discovery.discover_caches(request.caches, info)
    with locks.hold(caches):
        result = execute.undo(caches) if action == "undo" else execute.purge(caches)
    data = {"schema_version": 1, "mode": action, "result": result_to_dict(result)}
    emit(dumps(data) if as_json else render_result(result), output)
    return EXIT_OPERATIONAL if result.failed else EXIT_OK
