"""`envguard doctor [SOURCE] [--data DIR] [--loader FILE.py:NAME]`: the GPU-starvation checklist, each finding
with what to do; with --loader, the DataLoader setting the input-pipeline model gives that loader."""

from __future__ import annotations

from pathlib import Path

import click

from envguard.cli.options import Rule, declared, loader_options, styles
from envguard.doctor import render
from envguard.doctor.run import run_doctor
from envguard.findings import exit_code
from envguard.output import Style, present, report_on_error

STEP = "--step-ms, --step-cores and --step-threads describe the step beside --loader FILE.py:NAME; give it"


@declared(
    "doctor",
    rules=[Rule(name, STEP, needs=("loader",)) for name in ("step_ms", "step_cores", "step_threads")],
)
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
@loader_options(
    "doctor profiles its dataset in the environment and gives the setting the model of smoke and watch gives "
    "it.",
    step_default="the loader alone",
)
@styles()
def doctor(
    source: str | None,
    data_dir: Path | None,
    no_hashes: bool,
    loader: str | None,
    step_ms: float | None,
    step_cores: float | None,
    step_threads: int | None,
    style: Style,
    output: str | None,
) -> int:
    """Check GPU, torch/CUDA, CPUs, memory, /dev/shm, open files, the data disk and SOURCE's files (a prefix
    or name:ENV; default: the active environment); with --loader, the model's setting for that loader. Exit 1
    when a check FAILs."""
    with report_on_error("doctor", style, output):
        report = run_doctor(
            source,
            data_dir,
            hashes=not no_hashes,
            loader=loader,
            step_ms=step_ms,
            step_cores=step_cores or 0.0,
            step_threads=step_threads,
        )
    present(render.views(report), style, output)
    return exit_code(report.findings)
