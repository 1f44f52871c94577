"""`envguard doctor [SOURCE] [--data DIR]`: the GPU-starvation checklist, each finding with what to do."""

from __future__ import annotations

from pathlib import Path

import click

from envguard.errors import UsageError
from envguard.output import dumps, emit


@click.command("doctor")
@click.argument("source", required=False)
@click.option("--data", "data_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Check the filesystem and disk your training data lives on.")  # fmt: skip
@click.option(
    "--no-hashes", is_flag=True, help="Check files by existence and size only (faster on big environments)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema_version 1) instead of tables.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the findings as a Markdown table.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Write the report to FILE (atomically) instead of stdout.",
)
def command(source: str | None, data_dir: Path | None, no_hashes: bool, as_json: bool, as_markdown: bool,
            output: str | None) -> int:  # fmt: skip
    """Check GPU, torch/CUDA, CPUs, memory, /dev/shm, open files, the data disk and SOURCE's files (a prefix or
    name:ENV; default: the active environment). Exit 1 when a check FAILs."""
    from envguard.doctor.run import run_doctor, to_dict
    from envguard.findings import exit_code

    if as_json and as_markdown:
        raise UsageError("--json and --markdown cannot be combined; pick one output format")
    report = run_doctor(source, data_dir, hashes=not no_hashes)
    if as_json:
        emit(dumps(to_dict(report)), output)
    elif as_markdown:
        from envguard.findings import markdown

        emit(markdown(report.findings), output)
    else:
        from envguard.doctor.render import render

        emit(render(report), output)
    return exit_code(report.findings)
