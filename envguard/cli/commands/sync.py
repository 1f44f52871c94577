"""`envguard sync [SOURCE] [--lock FILE] [--backend B] [--dry-run] [--yes] [--files] [--timings] [--json]`.

An environment already in sync is answered from check's stored verdict, so the body imports the feature
where it needs it.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import TYPE_CHECKING

import click

from envguard.cli.options import declared, styles
from envguard.config import BACKENDS
from envguard.errors import EXIT_DRIFT, EXIT_OK, UsageError

if TYPE_CHECKING:
    from envguard.output import Style  # json and the model: not on the fast path


@declared("sync")
@click.argument("source", required=False)
@click.option(
    "--lock",
    type=click.Path(dir_okay=False),
    help="The lock to sync to (default: conda-lock.yml here or in a parent, or [tool.envguard] lock).",
)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    help="conda, mamba, micromamba or embedded, for the conda packages (default: $ENVGUARD_BACKEND, else the "
    "first tool on PATH, else embedded).",
)
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.option("-y", "--yes", is_flag=True, help="Apply without asking (needed where there is no terminal).")
@click.option(
    "--files",
    is_flag=True,
    help="Also reinstall the packages whose installed files were altered (what check --files finds).",
)
@click.option(
    "--timings",
    is_flag=True,
    help="Show where the time went, by stage (imports, read, plan, hashes, conda, pip, re-check); in JSON, "
    "`timings`. An environment in sync is then read again, not answered from the stored verdict.",
)
@styles(markdown=False, output=False)
def sync(
    source: str | None,
    lock: str | None,
    backend: str | None,
    dry_run: bool,
    yes: bool,
    files: bool,
    timings: bool,
    style: Style,
) -> int:
    """Make SOURCE (default: the active environment) equal the lock, changing only what differs: conda
    packages linked, unlinked or replaced, pip distributions installed or removed.

    Exit 0 in sync (or synced), 1 changes remain (--dry-run, declined), 2 bad input, 3 operational failure.
    """
    started = time.perf_counter()
    if not files and not timings:
        from envguard.sync import fast  # standard library only: the answer of an environment in sync

        stored = fast.answer(source, lock, style, dry_run)
        if stored is not None:
            sys.stdout.write(stored)
            return EXIT_OK
    from envguard.output import emit, present, progress_wanted, warn
    from envguard.sync import render
    from envguard.sync import run as syncing
    from envguard.sync.timings import Timing

    loaded = Timing("imports", time.perf_counter() - started, "this command's modules")
    options = syncing.SyncOptions(
        source, lock, backend, files, progress=progress_wanted(style), dry_run=dry_run
    )
    prepared = syncing.prepare(options, render.in_sync_answers)
    shown = False
    if prepared.plan.empty or dry_run:
        result = syncing.unchanged(prepared, dry_run=dry_run)
    elif yes:
        result = syncing.apply(prepared, options)
    else:
        if style == "human":
            emit(render.plan_text(prepared.plan), None)
            shown = True
        if style == "json" or not _interactive():
            raise UsageError(
                "not applied: there is no terminal to ask on; pass --yes to apply the plan (or --dry-run to "
                "only show it)"
            )
        result = (
            syncing.apply(prepared, options) if _confirmed() else syncing.unchanged(prepared, declined=True)
        )
    for message in result.warnings:
        warn(message)
    result = dataclasses.replace(result, timings=(loaded, *result.timings))
    present(render.views(result, shown=shown, timings=timings), style, None)
    return EXIT_OK if result.in_sync else EXIT_DRIFT


def _interactive() -> bool:
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _confirmed() -> bool:
    """conda's question: Enter or y applies, anything else declines."""
    sys.stderr.write("\nProceed ([y]/n)? ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("", "y", "yes")
