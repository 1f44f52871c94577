"""Run the fingerprint probe in a target environment's own interpreter, with a timeout."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from envguard import process
from envguard.errors import BadInputError, ProbeError
from envguard.model import Fingerprints, fingerprints_from

PROBE_SCRIPT = Path(__file__).with_name("fingerprint_probe.py")
MARKER = "ENVGUARD-PROBE-JSON: "
DEFAULT_TIMEOUT = 120.0


def interpreter(prefix: Path) -> Path:
    """The Python interpreter of a prefix (conda or venv, POSIX or Windows)."""
    candidates = [
        prefix / "bin" / "python",
        prefix / "bin" / "python3",
        prefix / "python.exe",
        prefix / "Scripts" / "python.exe",
    ]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    bin_dir = prefix / "bin"
    if bin_dir.is_dir():
        versioned = sorted(p for p in bin_dir.glob("python3.*") if p.name.replace("python3.", "").isdigit())
        if versioned:
            return versioned[-1]
    raise NoInterpreterError(
        f"{prefix}: no Python interpreter (bin/python) in this environment; install python into it"
    )


class NoInterpreterError(BadInputError):
    """The environment has no Python interpreter to run."""


SKIP_WITH_NO_PROBE = "use --no-probe to skip the probe"


@contextlib.contextmanager
def skip_hint(hint: str) -> Iterator[None]:
    """A probe failure inside re-raised with `hint` appended: how the running command lets the user skip
    the probe. Only commands that have such an option say so (the probe's own messages never do)."""
    try:
        yield
    except (ProbeError, NoInterpreterError) as exc:
        raise type(exc)(f"{exc}; {hint}") from exc


def timeout_seconds() -> float:
    try:
        return float(os.environ.get("ENVGUARD_PROBE_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


def run_probe(prefix: Path, *, timeout: float | None = None, python: Path | None = None) -> Fingerprints:
    """Fingerprints measured by the environment's interpreter; hangs and crashes become ProbeError."""
    exe = python or interpreter(prefix)
    limit = timeout if timeout is not None else timeout_seconds()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    try:
        done = process.run([exe, "-I", "-B", PROBE_SCRIPT], timeout=limit, env=env)
    except process.TimedOut as exc:
        raise ProbeError(
            f"{exe}: fingerprint probe did not finish within {limit:.0f} s (hung import?); "
            "set ENVGUARD_PROBE_TIMEOUT to wait longer"
        ) from exc
    except OSError as exc:
        raise ProbeError(f"{exe}: cannot run the environment's interpreter ({exc.strerror})") from exc
    return parse_output(done.stdout, done.stderr, done.returncode, exe)


def parse_output(stdout: str, stderr: str, returncode: int, exe: object = "python") -> Fingerprints:
    """Pick the marker line out of the probe's output (imports may print noise)."""
    line = next((ln for ln in stdout.splitlines() if ln.startswith(MARKER)), None)
    if returncode != 0 or line is None:
        last = (stderr.strip().splitlines() or [f"exit code {returncode}"])[-1]
        raise ProbeError(f"{exe}: fingerprint probe failed ({last})")
    try:
        data = json.loads(line[len(MARKER) :])
    except ValueError as exc:
        raise ProbeError(f"{exe}: fingerprint probe printed unreadable output") from exc
    if not isinstance(data, dict):
        raise ProbeError(f"{exe}: fingerprint probe printed unreadable output")
    return fingerprints_from(data)


def current_python_probe() -> Fingerprints:
    """Probe the running interpreter (used by tests and `doctor`)."""
    return run_probe(Path(sys.prefix), python=Path(sys.executable))
