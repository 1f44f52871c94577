"""The IPython magics `%load_ext envguard` registers.

    %envguard check                     any envguard command, run in the kernel's process; the result is
    %envguard doctor --json             displayed richly and returned (`r = %envguard check`: r.exit_code)
    %%envguard_watch [--interval S]     run the cell with its DataLoaders timed, then show watch's diagnosis

Loading the extension imports the command layer (click) and this package only: the command's feature loads
when it runs, as it does in the console script, and watch's sampler (psutil) when a cell is watched.
"""

from __future__ import annotations

import dataclasses
import shlex
from typing import Any

from envguard.errors import EXIT_BAD_INPUT, UsageError
from envguard.notebook.runner import run_command
from envguard.notebook.shown import Shown

DEFAULT_INTERVAL = 0.5


def register(ipython: Any) -> None:
    """Register `%envguard` and `%%envguard_watch` with this IPython shell."""

    def envguard(line: str) -> Shown:
        """Run an envguard command in this kernel's process: `%envguard check`, `%envguard doctor --json`,
        `%envguard --help`. Displays the result (Markdown where the command has it) and returns it."""
        return present(ipython, run_command(shlex.split(line)))

    def envguard_watch(line: str, cell: str) -> Shown:
        """`%%envguard_watch [--interval S]`: run the cell with its DataLoaders timed and this kernel (and
        its DataLoader workers) sampled every S seconds (default 0.5); then show what bounds it, as
        `envguard watch` does for a script."""
        try:
            interval = watch_interval(line)
        except UsageError as exc:
            bad = Shown("%%envguard_watch", EXIT_BAD_INPUT, stderr=f"envguard: error: {exc}\n")
            return present(ipython, bad)
        return present(ipython, watch_cell(ipython, cell, interval))

    ipython.register_magic_function(envguard, magic_kind="line", magic_name="envguard")
    ipython.register_magic_function(envguard_watch, magic_kind="cell", magic_name="envguard_watch")


def present(ipython: Any, shown: Shown) -> Shown:
    """Display `shown` now, wherever the magic stands (mid-cell, assigned, in `ipython script.ipy`), and
    return it marked as shown in this cell, so that as the cell's last expression it is not shown twice."""
    from IPython.display import display

    marked = dataclasses.replace(shown, shown_in=ipython.execution_count)
    display(marked.bundle(), raw=True)  # type: ignore[no-untyped-call]
    return marked


def watch_interval(line: str) -> float:
    """The seconds between samples `%%envguard_watch`'s line asks for (`--interval S`, default 0.5)."""
    words = shlex.split(line)
    if not words:
        return DEFAULT_INTERVAL
    if len(words) == 1 and words[0].startswith("--interval="):
        words = ["--interval", words[0].split("=", 1)[1]]
    if len(words) != 2 or words[0] != "--interval":
        raise UsageError(f"%%envguard_watch {line.strip()}: the only option is --interval SECONDS")
    try:
        interval = float(words[1])
    except ValueError:
        interval = 0.0
    if not interval > 0:
        raise UsageError(f"--interval {words[1]}: must be more than 0 seconds (e.g. --interval 0.5)")
    return interval


def watch_cell(ipython: Any, cell: str, interval: float) -> Shown:
    """Run `cell` in `ipython` under watch's in-process hook and sampler; its output and any traceback show
    as usual, then watch's diagnosis."""
    # psutil, NVML and watch's verdicts: loaded when a cell is watched, not by `%load_ext envguard`
    from envguard.watch import render
    from envguard.watch.inprocess import watch_call
    from envguard.watch.verdicts import watch_result

    def body() -> bool:
        return bool(ipython.run_cell(cell).success)

    run = watch_call(body, interval=interval, label="%%envguard_watch")
    return Shown("%%envguard_watch", 0, ((render.views(watch_result(run)), "human"),))
