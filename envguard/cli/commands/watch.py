"""`envguard watch [OPTIONS] -- COMMAND [ARGS...]` (or `--pid PID`): watch a training run, say what bounds
it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from envguard.cli.options import Rule, declared, styles
from envguard.output import Style, present
from envguard.watch import render
from envguard.watch.live import LiveView
from envguard.watch.plot import plot as draw
from envguard.watch.records import WatchRun
from envguard.watch.run import WatchOptions, run_watch, validate
from envguard.watch.slices import SECONDS, checked_result
from envguard.watch.trace import write_trace
from envguard.watch.verdicts import watch_result


@declared(
    "watch",
    passthrough=True,
    rules=(
        Rule(
            "apply_seconds",
            "--apply-and-measure runs COMMAND again with the in-process hook: not with --pid or --no-hook",
            excludes=("pid", "no_hook"),
        ),
    ),
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND [ARGS]...")
@click.option("--pid", type=int, help="Attach to a running job instead (no in-process DataLoader timing).")
@click.option("--interval", type=float, default=1.0, show_default=True, help="Seconds between samples.")
@click.option(
    "--duration", type=float, help="Stop after S seconds (COMMAND gets Ctrl-C, as from the terminal)."
)
@click.option(
    "--no-hook", is_flag=True, help="Do not put the DataLoader timing hook on COMMAND's PYTHONPATH."
)
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Write a PNG timeline to FILE.")
@click.option(
    "--trace",
    type=click.Path(path_type=Path),
    help="Write per-batch spans (data wait, step, each worker's fetch) to FILE.json: open it in "
    "ui.perfetto.dev or chrome://tracing.",
)
@click.option(
    "--apply-and-measure",
    "apply_seconds",
    type=float,
    is_flag=False,
    flag_value=SECONDS,
    default=None,
    metavar="[SECONDS]",
    help=f"Then check the advice: run COMMAND again in 4 slices of SECONDS of steady loop (default "
    f"{SECONDS:g}), the current and the advised setting interleaved, and report both rates.",
)
@styles()
def watch(
    command: tuple[str, ...],
    pid: int | None,
    interval: float,
    duration: float | None,
    no_hook: bool,
    plot: Path | None,
    trace: Path | None,
    apply_seconds: float | None,
    style: Style,
    output: str | None,
) -> int:
    """Run COMMAND unchanged (or watch --pid PID), sample its process tree, the host and the GPUs every
    interval, time its DataLoaders from inside, and report what bounds it with the fix and its expected gain.
    The exit code is COMMAND's."""
    options = WatchOptions(
        command=tuple(command),
        pid=pid,
        interval=interval,
        duration=duration,
        hook=not no_hook,
        trace=trace,
        apply_seconds=apply_seconds,
    )
    validate(options)
    report_to_stdout = not output or output == "-"
    if style == "human" and sys.stderr.isatty():
        run = _live(options)
    else:
        # a JSON or Markdown report on stdout keeps the job's own output out of it
        run = run_watch(options, output="stderr" if report_to_stdout and style != "human" else "inherit")
    result = watch_result(run)
    if options.apply_seconds is not None:
        result = checked_result(result, options.apply_seconds, _progress)
    if plot is not None:
        draw(run, plot)
    if trace is not None:
        spans = write_trace(run, trace)
        click.echo(f"trace: {spans} spans in {trace} (open it in ui.perfetto.dev)", err=True)
    present(render.views(result), style, output)
    return run.exit_code or 0


def _live(options: WatchOptions) -> WatchRun:
    """The live panel at the bottom of stderr; COMMAND's output passes through above it as it comes."""
    from rich.console import Console

    terminal = Console(stderr=True)
    view = LiveView(options, sys.stderr.fileno(), min(80, terminal.width), terminal.color_system)
    try:
        return run_watch(options, on_sample=view.update, output="pipe", sink=view)
    finally:
        view.close()


def _progress(line: str) -> None:
    """Each slice of --apply-and-measure as it starts, on stderr (a report on stdout stays whole)."""
    print(line, file=sys.stderr, flush=True)
