"""`envguard verify [--lock FILE] [--platform P] [--smoke] [--keep] [--pkgs-dir DIR] [--json |
--markdown]`."""

from __future__ import annotations

import contextlib
from pathlib import Path

from envguard.cli.grammar import Command, Opt, styles
from envguard.errors import EXIT_DRIFT, EXIT_OK, BadInputError
from envguard.output import Style, present, progress_wanted, report_on_error, warn
from envguard.verify import render
from envguard.verify import run as verify

GRAMMAR = Command(
    "verify",
    options=[
        Opt(
            "--lock",
            dest="lockfile",
            default="conda-lock.yml",
            show_default=True,
            metavar="FILE",
            help="The lock to rebuild (conda-lock.yml, explicit spec or pixi.lock).",
        ),
        Opt("--platform", platform=True, help="Platform of the lock to rebuild (default: this machine's)."),
        Opt("--smoke", flag=True, help="Also run the DataLoader smoke test in the rebuilt environment."),
        Opt(
            "--smoke-budget",
            kind="float",
            minimum=3,
            default=25.0,
            show_default=True,
            help="Seconds the smoke test may take.",
        ),
        Opt("--keep", flag=True, help="Keep the rebuilt environment and print where it is."),
        Opt(
            "--pkgs-dir",
            kind="path",
            file_okay=False,
            help="Package cache to read archives from (and download missing ones into): offline when it "
            "holds them all.",
        ),
        *styles(),
    ],
)


def run(
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
        present(render.views(result), style, output)
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
