"""`envguard export [SOURCE] [--pinned | --full | --from-history] [--no-builds] [--relax major|minor]
[--format env|explicit] [-o FILE]`."""

from __future__ import annotations

import click

from envguard.cli.options import valid_platform
from envguard.errors import EXIT_OK, UsageError
from envguard.output import emit, warn

_MODES = ("--pinned", "--full", "--from-history")


class _ExportCommand(click.Command):
    """--pinned, --full and --from-history share one destination, so click would silently take the last of
    them: two of them are refused before parsing."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        words = args[: args.index("--")] if "--" in args else args
        given = list(dict.fromkeys(a for a in words if a in _MODES))
        if len(given) > 1:
            raise click.UsageError(f"{given[0]} and {given[1]} are alternatives; give one", ctx=ctx)
        return super().parse_args(ctx, args)


@click.command("export", cls=_ExportCommand)
@click.argument("source", required=False)
@click.option(
    "--pinned",
    "mode",
    flag_value="pinned",
    help="What you asked for, pinned to the installed versions (default).",
)
@click.option(
    "--full",
    "mode",
    flag_value="full",
    help="Every package with its build string, like `conda env export`.",
)
@click.option(
    "--from-history",
    "mode",
    flag_value="from-history",
    help="Exactly the requested specs.",
)
@click.option(
    "--no-builds",
    is_flag=True,
    help="Every package with its version but no build, like `conda env export --no-builds` "
    "(a CUDA build keeps its choice: pytorch=2.1.0=*cuda11.8*).",
)
@click.option(
    "--relax",
    type=click.Choice(["major", "minor"]),
    help="Loosen each pin: minor writes numpy=1.26.*, major numpy=1.* (with --pinned or --no-builds).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["env", "explicit"]),
    default="env",
    show_default=True,
    help="environment.yml, or an @EXPLICIT spec with a sha256 after each URL (conda packages only).",
)
@click.option(
    "--platform",
    "platform",
    callback=valid_platform,
    help="Platform to read from a multi-platform lock (default: this machine's).",
)
@click.option(
    "--include-local",
    is_flag=True,
    help="Also write pip packages installed from local folders (their paths).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (atomically) instead of stdout."
)
def command(
    source: str | None,
    mode: str | None,
    no_builds: bool,
    relax: str | None,
    fmt: str,
    platform: str | None,
    include_local: bool,
    output: str | None,
) -> int:
    """Write SOURCE (a prefix, name:ENV or any supported file; default: the active environment) as a portable
    environment.yml, or as an explicit spec that `conda create --file` installs without solving."""
    from typing import cast

    from envguard.export.pins import Relax
    from envguard.export.run import ExportFormat, ExportMode, check_options, export
    from envguard.sources import load

    if fmt == "explicit" and mode in ("pinned", "from-history"):
        raise UsageError(
            f"--{mode} does not apply to --format explicit, which always lists every conda package"
        )
    chosen = cast(ExportMode, mode or ("full" if no_builds else "pinned"))
    check_options(chosen, cast(ExportFormat, fmt), no_builds, cast("Relax | None", relax))
    env = load(source, platform=platform, probe=False, detect_virtual=False)
    result = export(
        env,
        chosen,
        cast(ExportFormat, fmt),
        include_local=include_local,
        no_builds=no_builds,
        relax=cast("Relax | None", relax),
    )
    for message in (*env.warnings, *result.warnings):
        warn(message)
    emit(result.text, output)
    return EXIT_OK
