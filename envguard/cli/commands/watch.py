"""`envguard watch [OPTIONS] -- COMMAND [ARGS...]` (or `--pid PID`): watch a training run, say what bounds
it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from envguard.errors import UsageError
from envguard.output import dumps, emit


@click.command("watch", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND [ARGS]...")
@click.option("--pid", type=int, help="Attach to a running job instead (no in-process DataLoader timing).")
@click.option("--interval", type=float, default=1.0, show_default=True, help="Seconds between samples.")
@click.option(
    "--duration", type=float, help="Stop after S seconds (COMMAND gets Ctrl-C, as from the terminal)."
)
@click.option(
    "--no-hook", is_flag=True, help="Do not put the DataLoader timing hook on COMMAND's PYTHONPATH."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema_version 1, the whole timeline).")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the report as Markdown.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Write a PNG timeline to FILE.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the report to FILE instead of stdout."
)
def command(
    command: tuple[str, ...],
    pid: int | None,
    interval: float,
    duration: float | None,
    no_hook: bool,
    as_json: bool,
    as_markdown: bool,
    plot: Path | None,
    output: str | None,
) -> int:
    """Run COMMAND unchanged (or watch --pid PID), sample its process tree, the host and the GPUs every
    interval, time its DataLoaders from inside, and report what bounds it with the fix and its expected gain.
    The exit code is COMMAND's."""
    from envguard.watch.run import WatchOptions, run_watch, validate

    if as_json and as_markdown:
        raise UsageError("--json and --markdown cannot be combined; pick one output format")
    options = WatchOptions(
        command=tuple(command), pid=pid, interval=interval, duration=duration, hook=not no_hook
    )
    validate(options)
    report_to_stdout = not output or output == "-"
    live = not as_json and not as_markdown and sys.stderr.isatty()
    if live:
        run = _live(options)
    else:
        run = run_watch(
            options, output="stderr" if report_to_stdout and (as_json or as_markdown) else "inherit"
        )
    _report(run, as_json, as_markdown, plot, output)
    return run.exit_code or 0


def _report(run: Any, as_json: bool, as_markdown: bool, plot: Path | None, output: str | None) -> None:
    from envguard.watch.diagnose import diagnose
    from envguard.watch.render import markdown, render, to_dict

    diagnosis = diagnose(run)
    if plot is not None:
        from envguard.watch.render import plot as draw

        draw(run, plot)
    if as_json:
        emit(dumps(to_dict(run, diagnosis)), output)
    elif as_markdown:
        emit(markdown(run, diagnosis), output)
    else:
        emit(render(run, diagnosis), output)


def _live(options: Any) -> Any:
    """rich Live on stderr; COMMAND's output is piped and printed above the panel, never through it."""
    from rich.console import Console
    from rich.live import Live

    from envguard.watch.live import LiveView
    from envguard.watch.run import run_watch

    console = Console(stderr=True, width=min(80, Console(stderr=True).width))
    with Live(console=console, refresh_per_second=2, transient=True) as live:
        view = LiveView(options, live)
        return run_watch(options, on_sample=view.update, output="pipe", sink=view.print)
