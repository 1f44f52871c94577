"""`envguard check [SOURCE] [--lock FILE | -f environment.yml] [--rng] [--files] [--lock-fresh] [--json]`.

Only the option parsing lives here; the command itself is envguard.check.run.main (which envguard.cli.launcher
also calls directly, without click, for the common invocations).
"""

from __future__ import annotations

import click

from envguard.cli.options import output_style, valid_platform
from envguard.findings import exit_code
from envguard.output import Style, present


@click.command("check")
@click.argument("source", required=False)
@click.option(
    "--lock",
    "lock",
    type=click.Path(dir_okay=False),
    help="Lock to check against (default: conda-lock.yml here or in a parent, or [tool.envguard] lock).",
)
@click.option(
    "-f",
    "--file",
    "envfile",
    type=click.Path(dir_okay=False),
    help="environment.yml: check that every spec is satisfied and channels respected.",
)
@click.option(
    "--platform",
    callback=valid_platform,
    help="Platform entry of the lock to use (default: the environment's).",
)
@click.option(
    "--rng", is_flag=True, help="Re-run the fingerprint probe and compare with the lock's fingerprints."
)
@click.option(
    "--files", is_flag=True, help="Verify every installed file against its package's recorded hashes."
)
@click.option(
    "--lock-fresh",
    is_flag=True,
    help="Only check that the lock still satisfies environment.yml on every platform (no environment).",
)
@output_style(output=False)
@click.option("--no-cache", is_flag=True, help="Always run the full comparison.")
@click.option(
    "--all", "show_all", is_flag=True, help="List every finding of a long category (default: the first 10)."
)
@click.option(
    "--distributed",
    is_flag=True,
    help="Under torchrun: compare every rank's environment and DistributedSampler shards (gloo).",
)
def command(
    source: str | None,
    lock: str | None,
    envfile: str | None,
    platform: str | None,
    rng: bool,
    files: bool,
    lock_fresh: bool,
    no_cache: bool,
    show_all: bool,
    distributed: bool,
    style: Style,
) -> int:
    """Check SOURCE (default: the active environment) against a lock or an environment.yml; exit 0 clean, 1
    drift."""
    from envguard.check.run import CheckOptions, main

    if distributed:
        # imported here: the distributed package adds ~30 ms of imports (sources, socket) a plain check skips
        from envguard.distributed import render
        from envguard.distributed.run import run_distributed_check

        result = run_distributed_check(source, seed=0)
        if result.rank == 0:  # every rank judges alike; one prints
            present(render.views(result, "check --distributed"), style, None)
        return exit_code(result.findings)
    return main(
        CheckOptions(
            source,
            lock,
            envfile,
            platform,
            rng=rng,
            files=files,
            lock_fresh=lock_fresh,
            style=style,
            show_all=show_all,
            no_cache=no_cache,
        )
    )
