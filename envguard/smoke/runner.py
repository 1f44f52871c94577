"""Start the in-environment smoke module under the target environment's interpreter and read its one JSON
line into records (`measured.decode`), or what it had measured when stopped at the budget."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from envguard.errors import BadInputError, ProbeError
from envguard.machine import host
from envguard.output import command, progress_bar
from envguard.smoke.measured import UNMEASURED, Measured, MemoryUse, PhaseError, Stopped, decode
from envguard.smoke.verdicts.crashes import died_of_memory

PACKAGE_PARENT = Path(__file__).resolve().parent  # holds the standalone `envguard_smoke` package
MARKER = "ENVGUARD-SMOKE-JSON: "
HUNG_S = 1.0  # a sample still being read this long when the budget runs out is named as the culprit
OOM_GRACE_S = 10.0  # a process ran out of memory: for the module's own report of it (workers shut down)
# -E/-s: ignore PYTHON* variables and user site-packages. The package folder replaces the script folder ('')
# on sys.path so workers (fork, spawn or forkserver) import `envguard_smoke` the same way.
LAUNCH = (
    "import time; started = time.perf_counter(); import sys; "
    "sys.path[:] = [sys.argv[1]] + [p for p in sys.path if p not in ('', '.')]; "
    "from envguard_smoke.main import main; code = main(sys.argv[2:], started); "
    # the result is printed and every loader shut down: skip torch's slow interpreter teardown
    "sys.stdout.flush(); sys.stderr.flush(); import os; os._exit(code)"
)


def run_target(
    python: Path,
    settings: dict[str, Any],
    *,
    timeout: float,
    progress: bool = False,
    memory_limit: int | None = None,
) -> Measured:
    """Run the smoke module with `settings`; with `progress` (a person at a terminal) a bar on stderr shows
    the module's current phase and the time used of `timeout`. `memory_limit` is the one `settings` asks the
    module to set on itself; with the cgroup's OOM-kill count before and after, it tells a module killed for
    memory from a crash.

    The module runs in its own session, so it and every DataLoader worker form one process group; that group
    is killed when the module ends, at `timeout`, on Ctrl-C and on any error: no worker outlives the command.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory(prefix="envguard-smoke-") as watch_dir:
        settings = dict(settings, watch_dir=watch_dir)
        command = [str(python), "-E", "-s", "-B", "-c", LAUNCH, str(PACKAGE_PARENT), json.dumps(settings)]
        kills, peak = host.oom_kills(), _reaped_peak()
        started = time.time()
        try:
            process = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            raise ProbeError(f"{python}: cannot run the environment's interpreter ({exc.strerror})") from exc
        try:
            with _progress(Path(watch_dir), timeout, progress):
                stdout, stderr = wait_for_module(process, Path(watch_dir), timeout)
        except subprocess.TimeoutExpired:
            kill_group(process)
            partial = stopped(Path(watch_dir), timeout, time.time() - started, python)
            return with_memory(partial, _memory_use(memory_limit, kills, peak, Path(watch_dir)))
        finally:
            kill_group(process)
        use = _memory_use(memory_limit, kills, peak, Path(watch_dir))
    return parse_output(stdout, stderr or "", process.returncode, python, use)


def wait_for_module(process: subprocess.Popen[str], folder: Path, timeout: float) -> tuple[str, str]:
    """The module's stdout and stderr once it ends. TimeoutExpired at `timeout`, or OOM_GRACE_S after a
    process of the run recorded running out of memory (heartbeat state 2) while the module goes on: its
    MemoryError was lost on the way (a worker with nothing left to send it), and the module would wait for
    that batch until the budget."""
    until = time.monotonic() + max(timeout, 0.1)
    noticed: float | None = None
    while True:
        try:
            return process.communicate(timeout=max(0.01, min(TICK_S, until - time.monotonic())))
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if noticed is None and ran_out(folder):
                noticed = now
            if now >= until or (noticed is not None and now - noticed >= OOM_GRACE_S):
                raise


def _memory_use(
    limit: int | None, kills_before: int | None, peak_before: int | None, folder: Path
) -> MemoryUse:
    """The host's view of the run's memory: the limit asked for, the module's peak when it raised the
    largest of this process's reaped children, the OOM kills since the start, and the most a process that ran
    out had allocated past its start-up (its heartbeat record)."""
    kills, reaped = host.oom_kills(), _reaped_peak()
    return MemoryUse(
        limit_bytes=limit,
        peak_bytes=reaped if reaped is not None and (peak_before is None or reaped > peak_before) else None,
        oom_kills=kills - kills_before if kills is not None and kills_before is not None else None,
        held_bytes=max((held for held, _ in ran_out(folder) if held), default=None),
    )


def _reaped_peak() -> int | None:
    """The largest resident set of any child this process has reaped, in bytes (ru_maxrss is KiB on Linux)."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return None
    scale = 1 if sys.platform == "darwin" else 1024
    return int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * scale or None


TICK_S = 0.5


@contextlib.contextmanager
def _progress(watch_dir: Path, timeout: float, shown: bool) -> Iterator[None]:
    """While the block waits for the module: a bar over the budget, labelled with the phase the module
    records in its watch folder (`determinism phase`, `throughput: num_workers=4, ...`), when `shown`."""
    if not shown:
        yield
        return
    done = threading.Event()
    with progress_bar("envguard smoke: starting", max(1, math.ceil(timeout / TICK_S)), True) as advance:

        def tick() -> None:
            while not done.wait(TICK_S):
                try:
                    phase = (watch_dir / "phase").read_text(errors="replace").strip()
                except OSError:
                    phase = ""
                advance(label=f"envguard smoke: {phase}" if phase else None)

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()


def kill_group(process: subprocess.Popen[str]) -> None:
    """SIGKILL the module's whole process group (its DataLoader workers included) and reap the module."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(process.pid, signal.SIGKILL)
    for stream in (process.stdout, process.stderr):
        if stream is not None and not stream.closed:
            stream.close()
    with contextlib.suppress(subprocess.TimeoutExpired):  # a process stuck in the kernel (D state)
        process.wait(timeout=5)


def read_watch(folder: Path) -> tuple[str, list[tuple[float, str]]]:
    """(phase, [(since, index)...]) from the watch folder: what the module was doing, which samples were being
    read and since when (oldest first)."""
    phase = ""
    pending: list[tuple[float, str]] = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        try:
            text = path.read_text(errors="replace").strip()
        except OSError:
            continue
        if path.name == "phase":
            phase = text
        elif path.name.startswith("p"):
            state, _, rest = text.partition(" ")
            since, _, index = rest.partition(" ")
            if state == "1":
                try:
                    pending.append((float(since), index))
                except ValueError:
                    continue
    return phase, sorted(pending)


def ran_out(folder: Path) -> list[tuple[int, str]]:
    """(bytes held past its start-up, sample) for each process of the run that ran out of memory reading that
    sample (its heartbeat record's state 2: `2 <time> <bytes> <index>`)."""
    found: list[tuple[int, str]] = []
    for path in sorted(folder.glob("p*")) if folder.is_dir() else ():
        try:
            fields = path.read_text(errors="replace").strip().split(" ", 3)
        except OSError:
            continue
        if len(fields) == 4 and fields[0] == "2" and fields[2].isdigit():
            found.append((int(fields[2]), fields[3]))
    return found


def stopped(folder: Path, budget: float, elapsed: float, python: object = "python") -> Measured:
    """The module was stopped at the budget, or early because a process of the run ran out of memory and its
    report was lost: then the results so far with that MemoryError, which the verdicts name. A sample still
    being read for HUNG_S or more is a hang: ProbeError naming it (exit 3). Otherwise the results so far,
    marked `stopped`, so the verdicts still come."""
    phase, pending = read_watch(folder)
    out = ran_out(folder)
    if out:
        error = PhaseError(
            phase=phase or "start-up",
            error=f"MemoryError: a process of the run ran out of memory reading sample {out[0][1]} "
            "(its report was lost on the way to the module)",
        )
        lost = _partial(folder, python) or Measured(
            python=str(python), device="unknown", start_method="unknown"
        )
        return msgspec.structs.replace(lost, errors=(*lost.errors, error))
    where = f" ({phase})" if phase else ""
    now = time.time()
    if pending and now - pending[0][0] >= HUNG_S:
        since, index = pending[0]
        raise ProbeError(
            f"the dataset did not return sample {index} within {now - since:.1f} s{where}; the smoke "
            f"test was stopped at the --budget ({budget:.1f} s) with every DataLoader worker: look for a "
            f"read without a timeout, a lock or a dead mount in __getitem__({index})"
        )
    stop = Stopped(
        phase=phase,
        after_s=round(elapsed, 2),
        pending_s=round(now - pending[0][0], 2) if pending else None,
    )
    measured = _partial(folder, python)
    if measured is None:
        if phase.startswith("--loader") and phase.endswith("had not returned"):  # the user's function hung
            raise ProbeError(
                f"the smoke test did not finish within the --budget{where} and was stopped after "
                f"{elapsed:.1f} s with every DataLoader worker; look for a wait without a timeout in that "
                "function (a mount, a lock, a download)"
            ) from None
        # nothing measured yet (a slow start on a busy machine): the measurement could not finish, which
        # says nothing about the data; the report says so (INFO, exit 0)
        return Measured(python=str(python), device="unknown", start_method="unknown", stopped=stop)
    return msgspec.structs.replace(measured, stopped=stop)


def _partial(folder: Path, python: object) -> Measured | None:
    """What the module had measured when it was stopped (its partial.json), None when nothing yet."""
    try:
        text = (folder / "partial.json").read_bytes()
    except OSError:
        return None
    return decode(text, python) if text.strip() else None


def parse_output(
    stdout: str, stderr: str, returncode: int, python: object, use: MemoryUse = UNMEASURED
) -> Measured:
    """The marker line's JSON, with `use` (the host's view of the run's memory) merged into its own; a crash
    (no marker) becomes a ProbeError quoting stderr's last line, unless memory killed it: then the record
    says so (`killed`) and the verdicts name it."""
    line = next((ln for ln in stdout.splitlines() if ln.startswith(MARKER)), None)
    if line is None:
        lines = stderr.strip().splitlines()
        last = lines[-1] if lines else f"exit code {returncode}"
        if died_of_memory(returncode, last, use):
            killed = msgspec.structs.replace(use, killed=True)
            return Measured(python=str(python), device="unknown", start_method="unknown", memory_use=killed)
        if returncode == -signal.SIGKILL and not stderr.strip():
            raise ProbeError(killed_from_outside(python, use))
        raise ProbeError(
            f"{python}: the smoke test crashed in the environment ({last}); "
            "run the dataset once with num_workers=0 to see the full traceback"
        )
    return with_memory(decode(line[len(MARKER) :], python), use)


def killed_from_outside(python: object, use: MemoryUse) -> str:
    """The message for a module SIGKILLed without a word, by no one envguard knows: not envguard (its kill at
    the budget is a stop), not an OOM kill this cgroup counted; most often a killer for memory all the same
    (the kernel's in another cgroup, systemd-oomd, earlyoom), so the message gives the memory it sees."""
    memory = host.memory_info()
    gib = float(1 << 30)
    now = (
        f"{memory.available / gib:.1f} of {memory.total / gib:.1f} GiB available now"
        if memory.available is not None and memory.total
        else "the memory available unknown"
    )
    if use.peak_bytes:
        now += f"; its largest process reached {use.peak_bytes / gib:.2f} GiB"
    return (
        f"{python}: the smoke test was killed (SIGKILL) from outside envguard before it could report, most "
        f"often by an out-of-memory killer (the kernel's for another cgroup, systemd-oomd, earlyoom) on a "
        f"machine short of memory ({now}); free memory, or lower batch_size, num_workers or --memory-limit, "
        "and rerun"
    )


def with_memory(measured: Measured, use: MemoryUse) -> Measured:
    """`measured` with the host's view of the run's memory merged into the module's own: the limit the module
    set (the one asked for where it printed none), the larger peak, the host's OOM-kill count."""
    own = measured.memory_use
    merged = MemoryUse(
        limit_bytes=own.limit_bytes if own.limit_bytes is not None else use.limit_bytes,
        peak_bytes=max((p for p in (own.peak_bytes, use.peak_bytes) if p is not None), default=None),
        oom_kills=use.oom_kills,
        startup_bytes=own.startup_bytes,
        held_bytes=use.held_bytes,
    )
    return msgspec.structs.replace(measured, memory_use=merged)


def _torch_install(executable: str | None) -> str:
    """The installer of the environment's kind: conda for a conda prefix, the interpreter's pip for a venv."""
    if not executable:
        return "conda install pytorch, or pip install torch"
    prefix = Path(executable).parent.parent
    if (prefix / "conda-meta").is_dir():
        return command("conda", "install", "-p", str(prefix), "pytorch")
    return command(executable, "-m", "pip", "install", "torch")


def check_started(result: Measured, where: str, device: str) -> None:
    """Turn the module's refusals (no torch, no CUDA) into one-line bad-input errors."""
    error = result.refusal
    if error in ("bad-loader", "bad-dataset"):  # the module's own one line, naming FILE.py (and LINE)
        raise BadInputError(str(result.message))
    if error == "torch-missing":
        raise BadInputError(
            f"{where}: torch is not installed in this environment (python {result.python} at "
            f"{result.executable}); envguard smoke runs the DataLoader in the environment's own "
            f"interpreter: install pytorch there ({_torch_install(result.executable)}) or point SOURCE at an "
            "environment that has it"
        )
    if error == "cuda-unavailable":
        raise BadInputError(
            f"{where}: --device {device} but torch {result.torch} there has no usable CUDA "
            f"(torch.version.cuda={result.torch_cuda}); use --device cpu or install a CUDA build of "
            "pytorch"
        )


def progress_wanted() -> bool:
    """A person at an interactive terminal (the command adds: and not --json)."""
    return sys.stderr.isatty()
