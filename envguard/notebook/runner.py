"""Run any envguard command in this (the kernel's) process, as the console script would, and keep what it
showed for the notebook instead of printing it.

Inside a kernel, the active environment is the kernel's own (`sys.prefix`): a kernel started by a Jupyter
server from another environment inherits that server's VIRTUAL_ENV or CONDA_PREFIX, which would otherwise make
`%envguard check` check the server's environment instead of the one the notebook's code runs in.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator, Sequence

from envguard.cli.app import run
from envguard.notebook.external import kernel_variables
from envguard.notebook.shown import Shown
from envguard.output import taking


def run_command(argv: Sequence[str]) -> Shown:
    """`envguard ARGV` here, inside the CLI's error boundary; its results are kept, its other output
    captured, its exit code returned (never raised)."""
    out, err = io.StringIO(), io.StringIO()
    with (
        kernel_environment(),
        taking() as results,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = run(list(argv))
    return Shown(" ".join(argv), code, tuple(results), out.getvalue(), err.getvalue())


@contextlib.contextmanager
def kernel_environment() -> Iterator[None]:
    """While the block runs, this interpreter's environment is the active one (envguard.config.active_prefix):
    VIRTUAL_ENV for a venv, else CONDA_PREFIX (envguard.notebook.external.kernel_variables)."""
    names = ("VIRTUAL_ENV", "CONDA_PREFIX")
    saved = {name: os.environ.get(name) for name in names}
    wanted = kernel_variables(dict(os.environ))
    for name in names:
        if name in wanted:
            os.environ[name] = wanted[name]
        else:
            os.environ.pop(name, None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
