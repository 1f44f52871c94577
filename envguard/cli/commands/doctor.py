"""`envguard doctor [SOURCE] [--data DIR] [--loader FILE.py:NAME]`: the GPU-starvation checklist, each finding
with what to do; with --loader, the DataLoader setting the input-pipeline model gives that loader."""

from __future__ import annotations

from pathlib import Path

from envguard.cli.grammar import Arg, Command, Opt, number, styles
from envguard.doctor import render
from envguard.doctor.run import run_doctor
from envguard.errors import UsageError
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
        Opt(
            "--loader",
            metavar="FILE.py:NAME",
            help="Your own DataLoader (NAME() returns a DataLoader or (dataset, loader_kwargs)): profile its "
            "dataset in the environment and give the setting the model of smoke and watch gives it.",
        ),
        Opt(
            "--step-ms",
            metavar="MS",
            check=number("--step-ms", 0.0, "milliseconds"),
            help="With --loader: your training step's time per batch, as watch reports it (default: the "
            "loader alone).",
        ),
        Opt(
            "--step-cores",
            metavar="N",
            check=number("--step-cores", 0.0, "cores"),
            help="With --loader: the cores your step keeps busy, as watch reports it (default 0: a step that "
            "waits on a GPU).",
        ),
        Opt(
            "--step-threads",
            metavar="N",
            kind="int",
            minimum=1,
            help="With --loader: your step's intra-op threads, as watch reports them (default: torch's "
            "default in SOURCE).",
        ),
        *styles(),
    ],
)


def run(
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
    if loader is None and (step_ms is not None or step_cores is not None or step_threads is not None):
        raise UsageError(
            "--step-ms, --step-cores and --step-threads describe the step beside --loader FILE.py:NAME; "
            "give it"
        )
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
