"""Start the in-environment smoke module under the target environment's interpreter and read its one JSON
line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from envguard.errors import BadInputError, ProbeError

PACKAGE_PARENT = Path(__file__).resolve().parent  # holds the standalone `envguard_smoke` package
MARKER = "ENVGUARD-SMOKE-JSON: "
GRACE_S = 60.0  # on top of the budget: a hung import or a stuck worker becomes an error, not a hang
# -E/-s: ignore PYTHON* variables and user site-packages. The package folder replaces the script folder ('')
# on sys.path so workers (fork, spawn or forkserver) import `envguard_smoke` the same way.
LAUNCH = (
    "import time; started = time.perf_counter(); import sys; "
    "sys.path[:] = [sys.argv[1]] + [p for p in sys.path if p not in ('', '.')]; "
    "from envguard_smoke.main import main; sys.exit(main(sys.argv[2:], started))"
)


def run_target(
    python: Path, settings: dict[str, Any], *, timeout: float, progress: bool = False
) -> dict[str, Any]:
    """Run the smoke module with `settings`; stderr passes through when `progress` is on (a terminal)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    command = [str(python), "-E", "-s", "-B", "-c", LAUNCH, str(PACKAGE_PARENT), json.dumps(settings)]
    try:
        done = subprocess.run(
            command,
            stdout=subprocess.PIPE,
            stderr=None if progress else subprocess.PIPE,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ProbeError(
            f"{python}: the smoke test did not finish within {timeout:.0f} s (a hung import or "
            "DataLoader worker); rerun with a smaller --budget or check the dataset"
        ) from exc
    except OSError as exc:
        raise ProbeError(f"{python}: cannot run the environment's interpreter ({exc.strerror})") from exc
    return parse_output(done.stdout, done.stderr or "", done.returncode, python)


def parse_output(stdout: str, stderr: str, returncode: int, python: object) -> dict[str, Any]:
    """The marker line's JSON; a crash (no marker) becomes a ProbeError quoting stderr's last line."""
    line = next((ln for ln in stdout.splitlines() if ln.startswith(MARKER)), None)
    if line is None:
        lines = stderr.strip().splitlines()
        last = lines[-1] if lines else f"exit code {returncode}"
        raise ProbeError(
            f"{python}: the smoke test crashed in the environment ({last}); "
            "run the dataset once with num_workers=0 to see the full traceback"
        )
    try:
        data: dict[str, Any] = json.loads(line[len(MARKER) :])
    except ValueError as exc:
        raise ProbeError(f"{python}: the smoke test printed unreadable output") from exc
    return data


def check_started(result: dict[str, Any], where: str, device: str) -> None:
    """Turn the module's refusals (no torch, no CUDA) into one-line bad-input errors."""
    error = result.get("error")
    if error == "torch-missing":
        raise BadInputError(
            f"{where}: torch is not installed in this environment (python {result.get('python')} at "
            f"{result.get('executable')}); envguard smoke runs the DataLoader in the environment's own "
            "interpreter: "
            "install pytorch there (conda install pytorch) or point SOURCE at an environment that has it"
        )
    if error == "cuda-unavailable":
        raise BadInputError(
            f"{where}: --device {device} but torch {result.get('torch')} there has no usable CUDA "
            f"(torch.version.cuda={result.get('torch_cuda')}); use --device cpu or install a CUDA build of "
            "pytorch"
        )


def progress_wanted() -> bool:
    """Pass the module's progress lines through only to an interactive terminal."""
    return sys.stderr.isatty()
