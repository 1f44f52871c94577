"""`envguard lock [SOURCE] [-f environment.yml] [--platform P ...] [-c CHANNEL ...] [--cuda VER | --no-cuda]
[--format conda-lock|explicit|pixi] [--pixi-version 6|7] [--exclude-newer DATE] [-o FILE]`."""

from __future__ import annotations

import click

from envguard.cli.options import channel_option, declared
from envguard.errors import EXIT_OK
from envguard.lock.run import LockOptions
from envguard.lock.run import lock as write_lock
from envguard.output import emit, inform, warn
from envguard.textio import gc_paused


@declared("lock")
@click.argument("source", required=False)
@click.option("-f", "--file", "envfile", type=click.Path(dir_okay=False), help="Solve this environment.yml.")
@click.option(
    "--platform",
    "platforms",
    multiple=True,
    help="Platform to lock (repeatable; default: the file's `platforms:` or this machine's).",
)
@channel_option("Channel to solve -f environment.yml with")
@click.option("--cuda", metavar="VERSION", help="Lock for GPU machines: solve with __cuda=VERSION.")
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
    "--pixi-version",
    type=click.Choice(["6", "7"]),
    default="6",
    show_default=True,
    help="The pixi.lock version: 6 (conda reads it) or 7 (pixi 0.68 and later; written by rattler).",
)
@click.option(
    "--exclude-newer",
    metavar="DATE",
    help="Solve as of DATE (YYYY-MM-DD, midnight UTC, or an RFC 3339 time): leave out packages published "
    "later. Recorded in the lock.",
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
def lock(
    source: str | None,
    envfile: str | None,
    platforms: tuple[str, ...],
    channels: tuple[str, ...],
    cuda: str | None,
    no_cuda: bool,
    no_probe: bool,
    fmt: str,
    pixi_version: str,
    exclude_newer: str | None,
    include_local: bool,
    output: str | None,
) -> int:
    """Write a conda-lock.yml from a live environment (exact, no solving) or an environment.yml (solved)."""
    options = LockOptions(
        source,
        envfile,
        platforms,
        cuda,
        no_cuda,
        no_probe,
        fmt,
        output,
        include_local,
        pixi_version=int(pixi_version),
        exclude_newer=exclude_newer,
        channels=channels,
    )
    with gc_paused():  # the whole lock: as envguard.textio.gc_paused says
        result = write_lock(options)
    for message in result.warnings:
        warn(message)
    if result.stdout:
        emit(result.stdout, None)
    for line in result.written:
        inform(line)
    return EXIT_OK
