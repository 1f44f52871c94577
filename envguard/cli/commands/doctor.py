"""`envguard doctor [SOURCE] [--data DIR]`: the GPU-starvation checklist, each finding with what to do."""

from __future__ import annotations

from pathlib import Path

from envguard.cli.grammar import Arg, Command, Opt, styles
from envguard.doctor import render
from envguard.doctor.run import run_doctor
from envguard.findings import exit_code
from envguard.output import Style, present, report_on_error

GRAMMAR = Command(
    "doctor",
    [Arg("source", required=False)],
    [
        Opt(
            "--data",
            dest="data_dir",
            kind="path",
            exists=True,
            file_okay=False,
            as_path=True,
            help="Check the filesystem and disk your training data lives on.",
        ),
        Opt(
            "--no-hashes",
            flag=True,
            help="Check files by existence and size only (faster on big environments).",
        ),
        *styles(),
    ],
)


def run(source: str | None, data_dir: Path | None, no_hashes: bool, style: Style, output: str | None) -> int:
    """Check GPU, torch/CUDA, CPUs, memory, /dev/shm, open files, the data disk and SOURCE's files (a prefix
    or name:ENV; default: the active environment). Exit 1 when a check FAILs."""
    with report_on_error("doctor", style, output):
        report = run_doctor(source, data_dir, hashes=not no_hashes)
    present(render.views(report), style, output)
    return exit_code(report.findings)
