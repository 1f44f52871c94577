"""`envguard verify [--lock FILE] [--platform P] [--smoke] [--keep] [--pkgs-dir DIR] [--json | --markdown]`."""

from __future__ import annotations

from pathlib import Path

import click

from envguard.errors import UsageError
from envguard.output import dumps, emit, warn


@click.command("verify")
@click.option("--lock", "lockfile", default="conda-lock.yml", show_default=True, metavar="FILE",
              help="The lock to rebuild (conda-lock.yml, explicit spec or pixi.lock).")  # fmt: skip
@click.option("--platform", help="Platform of the lock to rebuild (default: this machine's).")
@click.option("--smoke", is_flag=True, help="Also run the DataLoader smoke test in the rebuilt environment.")
@click.option("--smoke-budget", type=click.FloatRange(min=3), default=25.0, show_default=True,
              help="Seconds the smoke test may take.")  # fmt: skip
@click.option("--keep", is_flag=True, help="Keep the rebuilt environment and print where it is.")
@click.option("--pkgs-dir", type=click.Path(file_okay=False), help="Package cache to read archives from (and "
              "download missing ones into): offline when it holds them all.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (schema_version 1).")
@click.option("--markdown", is_flag=True, help="Print a Markdown report (for a PR comment).")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the report to FILE instead of stdout."
)
def command(lockfile: str, platform: str | None, smoke: bool, smoke_budget: float, keep: bool, pkgs_dir: str | None, as_json: bool,
            markdown: bool, output: str | None) -> int:  # fmt: skip
    """Rebuild the lock in a temporary prefix (hashes checked), check it, optionally smoke-test it.

    Exit 0 pass, 1 verification failed (hash mismatch, drift, smoke), 2 bad input, 3 operational failure.
    """
    from envguard.verify import render
    from envguard.verify import run as verify

    if as_json and markdown:
        raise UsageError("give --json or --markdown, not both")
    options = verify.VerifyOptions(
        Path(lockfile), platform, smoke, keep, Path(pkgs_dir) if pkgs_dir else None, smoke_budget=smoke_budget
    )
    result = verify.verify(options)
    for message in result.warnings:
        warn(message)
    if as_json:
        text = dumps(render.to_dict(result))
    elif markdown:
        text = render.markdown(result)
    else:
        text = render.render(result)
    emit(text, output)
    return 0 if result.passed else 1
