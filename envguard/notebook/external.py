"""`%envguard` in a kernel whose environment lacks envguard's dependencies — envguard installed with pipx, as
the README advises, and only its package folder put on the kernel's path (the README's recipe): nothing is
installed into the environment, so nothing is added to what `check` compares. Standard library only.

Each command runs as the `envguard` on PATH (`$ENVGUARD_EXE` names another) with the kernel's environment as
the active one; the result is displayed wherever the magic stands and returned: `exit_code`, `text()`, and
`data()`, the JSON document of `--json`, shown as `application/json`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from typing import Any

# envguard's own imports (pyproject's dependencies): all importable here, or the commands run in a subprocess
NEEDED = ("click", "rich", "yaml", "rattler", "msgspec", "deepdiff", "packaging", "psutil")
NOT_FOUND = (
    "envguard: error: no `envguard` on the kernel's PATH; install it with `pipx install ...` and start "
    "Jupyter with ~/.local/bin on PATH, or set ENVGUARD_EXE to the command's path\n"
)


def complete() -> bool:
    """Every library envguard imports is importable here: its commands may run in the kernel's process."""
    return all(importlib.util.find_spec(name) is not None for name in NEEDED)


def kernel_variables(environ: dict[str, str]) -> dict[str, str]:
    """`environ` with this kernel's environment as the active one (VIRTUAL_ENV for a venv, else
    CONDA_PREFIX): a kernel inherits its Jupyter server's, which would otherwise be checked instead."""
    changed = dict(environ)
    if os.path.isfile(os.path.join(sys.prefix, "pyvenv.cfg")):
        changed["VIRTUAL_ENV"] = sys.prefix
    else:
        changed.pop("VIRTUAL_ENV", None)
        changed["CONDA_PREFIX"] = sys.prefix
    return changed


@dataclass(frozen=True)
class Ran:
    """One command run by the `envguard` on PATH: what it printed and its exit code."""

    command: str
    exit_code: int
    stdout: str = ""
    stderr: str = ""
    shown_in: int | None = None  # the IPython execution count of the cell that displayed it

    def data(self) -> list[dict[str, Any]]:
        """The JSON document the command printed (`--json`, `snapshot`), else []."""
        if not self.stdout.lstrip().startswith("{"):
            return []
        try:
            parsed = json.loads(self.stdout)
        except ValueError:
            return []
        return [parsed] if isinstance(parsed, dict) else []

    def text(self) -> str:
        """What the console script showed, then the exit code when it is not 0."""
        shown = self.stdout + self.stderr
        if self.exit_code:
            shown += f"(envguard {self.command}: exit {self.exit_code})\n"
        return shown

    def bundle(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"text/plain": self.text().rstrip("\n")}
        if "--json" in self.command.split() and self.data():
            shown["application/json"] = self.data()[0]
        return shown

    def _ipython_display_(self) -> None:
        """As a cell's last expression: shown, unless the magic displayed it in this very cell."""
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        if shell is not None and self.shown_in == shell.execution_count:
            return
        display(self.bundle(), raw=True)  # type: ignore[no-untyped-call]


def run_external(argv: list[str]) -> Ran:
    """`envguard ARGV` as the console script on PATH, for this kernel's environment."""
    exe = os.environ.get("ENVGUARD_EXE") or shutil.which("envguard")
    command = " ".join(argv)
    if not exe:
        return Ran(command, 2, stderr=NOT_FOUND)
    environ = kernel_variables(dict(os.environ))
    environ.pop("PYTHONPATH", None)  # envguard runs on its own interpreter and packages, not the kernel's
    done = subprocess.run(
        [exe, *argv], capture_output=True, text=True, env=environ, stdin=subprocess.DEVNULL, check=False
    )
    return Ran(command, done.returncode, done.stdout, done.stderr)


def register(ipython: Any) -> None:
    """Register `%envguard` driving the `envguard` on PATH (`%%envguard_watch` needs envguard in the kernel:
    it times the cell's DataLoaders in this process)."""
    from IPython.display import display

    def envguard(line: str) -> Ran:
        """Run `envguard ARGS` (the console script on PATH) for this kernel's environment; the result is
        displayed and returned."""
        ran = replace(run_external(shlex.split(line)), shown_in=ipython.execution_count)
        display(ran.bundle(), raw=True)  # type: ignore[no-untyped-call]
        return ran

    def envguard_watch(line: str, cell: str) -> None:
        """Unavailable here: it runs watch's DataLoader hook inside the kernel's process."""
        print(
            "envguard: error: %%envguard_watch runs inside the kernel and needs envguard installed in its "
            "environment; use `envguard watch -- python script.py` from a shell instead",
            file=sys.stderr,
        )

    ipython.register_magic_function(envguard, magic_kind="line", magic_name="envguard")
    ipython.register_magic_function(envguard_watch, magic_kind="cell", magic_name="envguard_watch")
