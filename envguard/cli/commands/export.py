"""`envguard export [SOURCE] [--pinned | --full | --from-history] [--no-builds] [--relax major|minor]
[--format env|explicit|cyclonedx] [-o FILE]`."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click

from envguard.cli.options import declared, platform_option
from envguard.errors import EXIT_OK, UsageError
from envguard.export.pins import Relax
from envguard.export.run import ExportFormat, ExportMode, check_options
from envguard.export.run import export as write_export
from envguard.export.written import replaced_warning, tracked_by_git
from envguard.output import emit, inform, warn
from envguard.prefix.licenses import licenses
from envguard.sources import load
from envguard.textio import gc_paused


@declared("export", alternatives=[("--pinned", "--full", "--from-history")])
@click.argument("source", required=False)
@click.option(
    "--pinned",
    "mode",
    flag_value="pinned",
    help="What you asked for, pinned to the installed versions (default).",
)
@click.option(
    "--full", "mode", flag_value="full", help="Every package with its build string, like `conda env export`."
)
@click.option("--from-history", "mode", flag_value="from-history", help="Exactly the requested specs.")
@click.option(
    "--no-builds",
    is_flag=True,
    help="Every package with its version but no build, like `conda env export --no-builds` (a CUDA build "
    "keeps its choice: pytorch=2.1.0=*cuda11.8*).",
)
@click.option(
    "--relax",
    type=click.Choice(["major", "minor"]),
    help="Loosen each pin: minor writes numpy=1.26.*, major numpy=1.* (with --pinned or --no-builds).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["env", "explicit", "cyclonedx"]),
    default="env",
    show_default=True,
    help="environment.yml, an @EXPLICIT spec with a sha256 after each URL (conda packages only), or a "
    "CycloneDX 1.6 JSON SBOM (purls, hashes, licenses, dependencies).",
)
@platform_option("Platform to read from a multi-platform lock (default: this machine's).")
@click.option(
    "--include-local",
    is_flag=True,
    help="Also write pip packages installed from local folders (their paths).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (atomically) instead of stdout."
)
@gc_paused()  # the whole export: as envguard.textio.gc_paused says
def export(
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
    environment.yml, as an explicit spec that `conda create --file` installs without solving, or as a
    CycloneDX SBOM."""
    if fmt in ("explicit", "cyclonedx") and mode in ("pinned", "from-history"):
        raise UsageError(f"--{mode} does not apply to --format {fmt}, which always lists every package")
    chosen = cast(ExportMode, mode or ("full" if no_builds else "pinned"))
    check_options(chosen, cast(ExportFormat, fmt), no_builds, cast("Relax | None", relax))
    env = load(source, platform=platform, probe=False, detect_virtual=False)
    declared = licenses(Path(env.prefix)) if fmt == "cyclonedx" and env.prefix else None
    result = write_export(
        env,
        chosen,
        cast(ExportFormat, fmt),
        include_local=include_local,
        no_builds=no_builds,
        relax=cast("Relax | None", relax),
        licenses=declared,
    )
    for message in (*env.warnings, *result.warnings):
        warn(message)
    to_file = output not in (None, "-")
    replaced = to_file and Path(str(output)).is_file()
    emit(result.text, output)
    if to_file:
        inform(f"wrote {output}: {result.summary}")
        if replaced and tracked_by_git(Path(str(output))):
            warn(replaced_warning(str(output)))
    return EXIT_OK
