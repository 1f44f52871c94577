"""`envguard verify [--lock FILE] [--platform P] [--smoke] [--keep] [--pkgs-dir DIR] [--json |
--markdown]`."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from envguard.cli.options import output_style, valid_platform
from envguard.errors import EXIT_DRIFT, EXIT_OK, BadInputError
from envguard.output import Style, Views, present, warn


@click.command("verify")
@click.option(
    "--lock",
    "lockfile",
    default="conda-lock.yml",
    show_default=True,
    metavar="FILE",
    help="The lock to rebuild (conda-lock.yml, explicit spec or pixi.lock).",
)
@click.option(
    "--platform", callback=valid_platform, help="Platform of the lock to rebuild (default: this machine's)."
)
@click.option("--smoke", is_flag=True, help="Also run the DataLoader smoke test in the rebuilt environment.")
@click.option(
    "--smoke-budget",
    type=click.FloatRange(min=3),
    default=25.0,
    show_default=True,
    help="Seconds the smoke test may take.",
)
@click.option("--keep", is_flag=True, help="Keep the rebuilt environment and print where it is.")
@click.option(
    "--pkgs-dir",
    type=click.Path(file_okay=False),
    help="Package cache to read archives from (and "
    "download missing ones into): offline when it holds them all.",
)
@output_style()
def command(
    lockfile: str,
    platform: str | None,
    smoke: bool,
    smoke_budget: float,
    keep: bool,
    pkgs_dir: str | None,
    style: Style,
    output: str | None,
) -> int:
    """Rebuild the lock in a temporary prefix (hashes checked), check it, optionally smoke-test it.

    Exit 0 pass, 1 verification failed (hash mismatch, drift, smoke), 2 bad input, 3 operational failure.
    """
    from envguard.output import progress_wanted, report_on_error
    from envguard.verify import render
    from envguard.verify import run as verify

    with report_on_error("verify", style, output), contextlib.ExitStack() as later:
        # the temporary prefix is deleted once the report is out
        options = verify.VerifyOptions(
            Path(lockfile),
            platform,
            smoke,
            keep,
            _pkgs_dir(pkgs_dir),
            smoke_budget=smoke_budget,
            progress=progress_wanted(style),
        )
        result = verify.verify(options, later)
        for message in result.warnings:
            warn(message)
        views = Views(
            lambda: render.to_dict(result), lambda: render.render(result), lambda: render.markdown(result)
        )
        present(views, style, output)
    return EXIT_OK if result.passed else EXIT_DRIFT


def _pkgs_dir(value: str | None) -> Path | None:
    """--pkgs-dir: an existing folder, or a new one inside an existing folder (never a chain of folders made
    up from a typo)."""
    if not value:
        return None
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise BadInputError(f"--pkgs-dir {value}: not a folder")
    if not path.exists() and not path.absolute().parent.is_dir():
        raise BadInputError(
            f"--pkgs-dir {value}: neither it nor its parent {path.absolute().parent} exists; create it first "
            "(mkdir -p) or pass an existing folder"
        )
    return path
