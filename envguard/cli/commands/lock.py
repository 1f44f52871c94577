"""`envguard lock [SOURCE] [-f environment.yml] [--platform P ...] [--cuda VER | --no-cuda]
[--format conda-lock|explicit|pixi] [-o FILE]`."""

from __future__ import annotations

import click


@click.command("lock")
@click.argument("source", required=False)
@click.option("-f", "--file", "envfile", type=click.Path(dir_okay=False), help="Solve this environment.yml.")
@click.option(
    "--platform",
    "platforms",
    multiple=True,
    help="Platform to lock (repeatable; default: the file's `platforms:` or this machine's).",
)
@click.option("--cuda", "cuda", metavar="VERSION", help="Lock for GPU machines: solve with __cuda=VERSION.")
@click.option("--no-cuda", is_flag=True, help="Lock for machines without a GPU (no __cuda).")
@click.option("--no-probe", is_flag=True, help="Live source: do not run the fingerprint probe.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["conda-lock", "explicit", "pixi"]),
    default="conda-lock",
    show_default=True,
    help="explicit: one @EXPLICIT file per platform; pixi: a pixi.lock (rattler lock v6).",
)
@click.option(
    "--include-local",
    is_flag=True,
    help="Write the local paths of pip packages installed from this machine's disk (default: name==version).",
)
@click.option(
    "-o",
    "--output",
    help="Output file (default conda-lock.yml, conda-{platform}.lock for explicit, pixi.lock for pixi; "
    "`{platform}` is replaced; `-` for stdout).",
)
def command(
    source: str | None,
    envfile: str | None,
    platforms: tuple[str, ...],
    cuda: str | None,
    no_cuda: bool,
    no_probe: bool,
    fmt: str,
    include_local: bool,
    output: str | None,
) -> int:
    """Write a conda-lock.yml from a live environment (exact, no solving) or an environment.yml (solved)."""
    from envguard.lock.run import LockOptions, main

    return main(LockOptions(source, envfile, platforms, cuda, no_cuda, no_probe, fmt, output, include_local))
