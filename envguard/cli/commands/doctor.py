"""`envguard doctor [SOURCE] [--data DIR]`: the GPU-starvation checklist, each finding with what to do."""

from __future__ import annotations

from pathlib import Path

import click

from envguard.cli.options import output_style
from envguard.doctor import render
from envguard.doctor.run import run_doctor
from envguard.findings import exit_code
from envguard.output import Style, present, report_on_error


@click.command("doctor")
@click.argument("source", required=False)
@click.option(
    "--data",
    "data_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Check the filesystem and disk your training data lives on.",
)
@click.option(
    "--no-hashes", is_flag=True, help="Check files by existence and size only (faster on big environments)."
)
@output_style()
def command(
    source: str | None, data_dir: Path | None, no_hashes: bool, style: Style, output: str | None
) -> int:
    """Check GPU, torch/CUDA, CPUs, memory, /dev/shm, open files, the data disk and SOURCE's files (a prefix
    or name:ENV; default: the active environment). Exit 1 when a check FAILs."""
    with report_on_error("doctor", style, output):
        report = run_doctor(source, data_dir, hashes=not no_hashes)
    present(render.views(report), style, output)
    return exit_code(report.findings)
