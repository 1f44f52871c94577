"""What `%load_ext envguard` costs an IPython shell, side by side with the shell alone, in one run.

    python scripts/bench/bench_notebook.py [--runs 15]

Times, interleaved round-robin, each as a fresh interpreter (wall and the child's CPU time):
  - the floor: `InteractiveShell.instance()` (what every IPython kernel starts with),
  - the same, then `%load_ext envguard`,
  - the same, then `%envguard --version` (the command layer's first run inside the kernel).
Prints a Markdown table of medians and the extension's cost above the floor.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_conda import Case, timed

SHELL = "from IPython.core.interactiveshell import InteractiveShell\nshell = InteractiveShell.instance()\n"
CASES = {
    "IPython shell (floor)": SHELL,
    "+ %load_ext envguard": SHELL + "shell.run_line_magic('load_ext', 'envguard')\n",
    "+ %envguard --version": SHELL
    + "shell.run_line_magic('load_ext', 'envguard')\nshell.run_line_magic('envguard', '--version')\n",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    cases = {name: Case([sys.executable, "-c", code]) for name, code in CASES.items()}
    env = dict(os.environ)
    for case in cases.values():
        timed(case, env)  # warm the page cache
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, case in cases.items():
            wall, cpu = timed(case, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    load = os.getloadavg()
    print(
        f"{args.runs} runs each, interleaved; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load "
        f"average {load[0]:.2f} {load[1]:.2f}.\n"
    )
    print("| case | wall (ms) | CPU (ms) | CPU above the floor (ms) |\n|---|---:|---:|---:|")
    floor = statistics.median(cpus["IPython shell (floor)"])
    for name in cases:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"| {name} | {wall * 1000:.0f} | {cpu * 1000:.0f} | {(cpu - floor) * 1000:+.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
