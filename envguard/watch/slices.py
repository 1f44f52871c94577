"""`--apply-and-measure`: check watch's advice by running COMMAND again in bounded slices, the current setting
and the advised one interleaved (current, advised, advised, current: a drift in the machine's load falls on
both sides alike), each put in and stopped by the hook (hook/_envguard_apply.py) after SECONDS of steady loop
or BATCHES steady batches of the dominant loader, whichever comes first; the rates measured go to the pure
verdict (verdicts/checked.py).

A slice is its own process group: once its main process has ended, any process of the group still alive
after SETTLE_S is named in the record and killed, and a slice that outlives its time limit is stopped as
--duration stops a job (SIGINT, SIGTERM, SIGKILL to the group).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Literal

from envguard.pipeline import Setting, too_many_threads
from envguard.watch import job
from envguard.watch.records import LoaderTotals, SliceRun, WatchRun
from envguard.watch.result import Checked, Diagnosis, WatchResult
from envguard.watch.streams import StreamReader
from envguard.watch.summary import dominant
from envguard.watch.verdicts.checked import judge_checked, not_checked

Side = Literal["current", "advised"]
Ended = Literal["slice", "job", "timeout"]
APPLY_ENV = "ENVGUARD_WATCH_APPLY"  # the slice's override and bounds, as JSON (read by the hook)
SECONDS = 15.0  # --apply-and-measure's default: seconds of steady loop per slice
BATCHES = 1000  # ... or this many steady batches, whichever comes first
ORDER: tuple[Side, ...] = ("current", "advised", "advised", "current")
SETTLE_S = 2.0
GRACE_S = 30.0  # a slice's time limit beyond twice the watched run's start-up and three times its bound


@dataclass(frozen=True, slots=True)
class Override:
    """What a slice puts into the job: the DataLoader arguments and the thread count (None: the job's own),
    for the loader whose dataset type is `dataset` (None: every loader)."""

    dataset: str | None
    settings: Setting | None = None
    threads: int | None = None

    def text(self) -> str:
        """The change as a person writes it: `DataLoader(num_workers=4, ...)`, `torch.set_num_threads(1)`."""
        parts = [f"DataLoader({self.settings.call()})"] if self.settings is not None else []
        parts += [f"torch.set_num_threads({self.threads})"] if self.threads else []
        return " and ".join(parts) or "the current setting"

    def wire(self, seconds: float, batches: int) -> str:
        """The hook's $ENVGUARD_WATCH_APPLY."""
        body: dict[str, Any] = {"dataset": self.dataset, "seconds": seconds, "batches": batches}
        if self.settings is not None:
            s = self.settings
            body["settings"] = {
                "num_workers": s.num_workers,
                "persistent_workers": s.persistent_workers and s.num_workers > 0,
                "pin_memory": s.pin_memory,
                "prefetch_factor": (s.prefetch_factor or 2) if s.num_workers else None,
            }
        if self.threads:
            body["threads"] = self.threads
        return json.dumps(body)


def _arguments(setting: Setting) -> tuple[int, int | None, bool, bool]:
    return (setting.num_workers, setting.prefetch_factor, setting.persistent_workers, setting.pin_memory)


def override_of(run: WatchRun, diagnosis: Diagnosis) -> Override | str:
    """The advised change as a slice puts it in, or the one line saying why there is none to check."""
    if not run.command:
        return "--pid attaches to a running job: there is no COMMAND to run again"
    if run.hook.state == "off":
        return "the in-process hook was off (--no-hook or ENVGUARD_WATCH_HOOK=0); the slices need it"
    rec, loader, pipeline = diagnosis.recommendation, dominant(run.loaders), diagnosis.pipeline
    if loader is None:
        return f"there is no advice to check ({diagnosis.verdict})"
    dataset = loader.settings.dataset
    if rec is not None and rec.setting == "threads" and rec.value:
        return Override(dataset, threads=rec.value)
    current = pipeline.current if pipeline is not None else None
    if (
        rec
        and rec.advised is not None
        and current is not None
        and _arguments(rec.advised) != _arguments(current)
    ):
        return Override(dataset, settings=rec.advised)
    threads = too_many_threads(pipeline) if pipeline is not None else None
    if threads is not None:  # not input-bound, the thread advice stands as a finding of its own
        return Override(dataset, threads=threads.advised)
    if rec is None:
        return f"there is no advice to check ({diagnosis.verdict})"
    return f"the advice ({rec.setting}) changes no DataLoader argument or thread count watch can put in"


def _time_limit(run: WatchRun, seconds: float) -> float:
    """Twice the watched run's start-up (until the hook first reported a loader) and three times the slice's
    bound, plus GRACE_S."""
    ready = next((s.t for s in run.samples if s.loaders), run.duration)
    return 2 * ready + 3 * seconds + GRACE_S


def check_advice(
    run: WatchRun,
    diagnosis: Diagnosis,
    seconds: float = SECONDS,
    progress: Callable[[str], None] | None = None,
) -> Checked:
    """Run the slices (ORDER) and judge them; a slice that measured nothing, an override that did not reach
    the loader or Ctrl-C ends the check early with the reason."""
    target = override_of(run, diagnosis)
    if isinstance(target, str):
        return not_checked(target)
    limit, change = _time_limit(run, seconds), target.text()
    slices: list[SliceRun] = []
    try:
        for number, side in enumerate(ORDER, 1):
            override = target if side == "advised" else Override(target.dataset)
            if progress is not None:
                progress(f"--apply-and-measure: slice {number} of {len(ORDER)}, {side}: {override.text()}")
            done = run_slice(run.command, side, override, seconds, limit)
            slices.append(done)
            why = _failed(done, override)
            if why:
                return not_checked(f"slice {number} ({side}): {why}", tuple(slices), change)
    except KeyboardInterrupt:
        return not_checked(
            f"stopped by Ctrl-C after {len(slices)} of {len(ORDER)} slices", tuple(slices), change
        )
    rates = {side: tuple(s.rate for s in slices if s.side == side and s.rate is not None) for side in ORDER}
    predicted = diagnosis.recommendation.expected_speedup if diagnosis.recommendation else None
    return judge_checked(change, rates["current"], rates["advised"], predicted, tuple(slices))


def _failed(done: SliceRun, override: Override) -> str:
    """Why a slice cannot be compared ('' when it can)."""
    if done.error:
        return done.error
    if done.rate is None:
        return f"no steady batches measured (ended: {done.ended}, exit code {done.exit_code})"
    wanted = override.settings
    if wanted is not None and (done.settings is None or done.settings.num_workers != wanted.num_workers):
        got = done.settings.num_workers if done.settings is not None else "unknown"
        return f"the override did not reach the loader (num_workers={got}, not {wanted.num_workers})"
    if override.threads and done.threads_set != override.threads:
        return f"torch.set_num_threads({override.threads}) did not hold (torch reported {done.threads_set})"
    return ""


def run_slice(
    command: tuple[str, ...], side: Side, override: Override, seconds: float, limit: float
) -> SliceRun:
    """COMMAND once with `override` put in, until the hook stops it at its bound, it ends, or `limit`
    seconds pass; its output goes to a temporary log (its last line names a failure)."""
    folder = Path(tempfile.mkdtemp(prefix="envguard-slice-"))
    start = time.monotonic()
    ended: Ended = "job"
    with tempfile.TemporaryFile() as log:
        child = job.spawn(
            command, folder, "inherit", extra_env={APPLY_ENV: override.wire(seconds, BATCHES)}, log=log
        )
        try:
            child.wait(limit)
        except subprocess.TimeoutExpired:
            ended = "timeout"
        finally:  # Ctrl-C too: the slice's whole group is stopped before envguard goes on
            if child.poll() is None:
                job.stop(child)
            lingering = _settle(child.pid)
            wall = time.monotonic() - start
        try:
            return _measured(folder, side, override, child, ended, wall, lingering, _last_line(log))
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _measured(
    folder: Path,
    side: Side,
    override: Override,
    child: subprocess.Popen[bytes],
    ended: Ended,
    wall: float,
    lingering: tuple[int, ...],
    last_line: str,
) -> SliceRun:
    reader = StreamReader(folder)
    reader.poll()
    mine = tuple(lt for lt in reader.loaders() if override.dataset in (None, lt.settings.dataset))
    loader: LoaderTotals | None = dominant(mine)
    applied = reader.applied()
    report = applied.get(loader.pid) if loader is not None else next(iter(applied.values()), None)
    errors = [a.error for a in applied.values() if a.error] + list(reader.errors.values())
    if report is not None and report.stopped:
        ended = "slice"
    code = job.exit_status(child.returncode) if child.returncode is not None else None
    error = "; ".join(errors)
    if not error and loader is None and code:
        error = f"COMMAND exited with code {code}" + (f": {last_line}" if last_line else "")
    return SliceRun(
        side=side,
        batches=loader.batches if loader is not None else 0,
        loop_s=round(loader.loop_s, 4) if loader is not None else 0.0,
        rate=round(loader.batches / loader.loop_s, 3) if loader is not None and loader.batches else None,
        settings=loader.settings if loader is not None else None,
        applied_to=report.loaders if report is not None else 0,
        threads_set=report.threads_set if report is not None else None,
        ended=ended,
        exit_code=code,
        wall_s=round(wall, 3),
        workers=tuple(
            sorted({f.pid for f in reader.fetches() if f.worker and loader and f.ppid == loader.pid})
        ),
        lingering=lingering,
        error=error,
    )


def _last_line(log: IO[bytes]) -> str:
    log.seek(max(0, log.seek(0, os.SEEK_END) - 4096))
    lines = [line for line in log.read().decode(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else ""


def _settle(group: int) -> tuple[int, ...]:
    """Processes of the slice's group still alive SETTLE_S after its main process ended (not zombies, which
    only wait for a parent to read them), killed."""
    import psutil

    deadline = time.monotonic() + SETTLE_S
    while True:
        alive = []
        for proc in psutil.process_iter(["status"]):
            with suppress(OSError, psutil.Error):
                if os.getpgid(proc.pid) == group and proc.info["status"] != psutil.STATUS_ZOMBIE:
                    alive.append(proc.pid)
        if not alive or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    if alive:
        with suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    return tuple(sorted(alive))


def checked_result(
    result: WatchResult, seconds: float = SECONDS, progress: Callable[[str], None] | None = None
) -> WatchResult:
    """The watch's result with its advice checked (`Diagnosis.checked`)."""
    checked = check_advice(result.run, result.diagnosis, seconds, progress)
    return replace(result, diagnosis=replace(result.diagnosis, checked=checked))
