"""`envguard lock [SOURCE] [-f environment.yml] [--platform P ...] [-c CHANNEL ...] [--cuda VER | --no-cuda]
[--format conda-lock|explicit|pixi] [--pixi-version 6|7] [--exclude-newer DATE] [-o FILE]`. The console
script answers it itself (envguard.cli.launcher): the body imports what it runs."""

from __future__ import annotations

from envguard.cli.grammar import Arg, Command, Opt, channel_option
from envguard.errors import EXIT_OK

GRAMMAR = Command(
    "lock",
    [Arg("source", required=False)],
    [
        Opt("-f", "--file", dest="envfile", kind="path", dir_okay=False, help="Solve this environment.yml."),
        Opt(
            "--platform",
            dest="platforms",
            many=True,
            help="Platform to lock (repeatable; default: the file's `platforms:` or this machine's).",
        ),
        channel_option("Channel to solve -f environment.yml with"),
        Opt("--cuda", metavar="VERSION", help="Lock for GPU machines: solve with __cuda=VERSION."),
        Opt("--no-cuda", flag=True, help="Lock for machines without a GPU (no __cuda)."),
        Opt("--no-probe", flag=True, help="Live source: do not run the fingerprint probe."),
        Opt(
            "--format",
            dest="fmt",
            choices=("conda-lock", "explicit", "pixi"),
            default="conda-lock",
            show_default=True,
            help="explicit: one @EXPLICIT file per platform; pixi: a pixi.lock (rattler lock v6).",
        ),
        Opt(
            "--pixi-version",
            choices=("6", "7"),
            default="6",
            show_default=True,
            help="The pixi.lock version: 6 (conda reads it) or 7 (pixi 0.68 and later; written by rattler).",
        ),
        Opt(
            "--exclude-newer",
            metavar="DATE",
            help="Solve as of DATE (YYYY-MM-DD, midnight UTC, or an RFC 3339 time): leave out packages "
            "published later. Recorded in the lock.",
        ),
        Opt(
            "--include-local",
            flag=True,
            help="Write the local paths of pip packages installed from this machine's disk "
            "(default: name==version).",
        ),
        Opt(
            "-o",
            "--output",
            help="Output file (default conda-lock.yml, conda-{platform}.lock for explicit, pixi.lock for "
            "pixi; `{platform}` is replaced; `-` for stdout).",
        ),
    ],
)


def run(
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
    from envguard.lock.run import LockOptions, lock
    from envguard.output import emit, inform, warn
    from envguard.textio import gc_paused

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
        result = lock(options)
    for message in result.warnings:
        warn(message)
    if result.stdout:
        emit(result.stdout, None)
    for line in result.written:
        inform(line)
    return EXIT_OK
