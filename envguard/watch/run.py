"""`run_watch`: start COMMAND (or attach to --pid), sample it every interval until it exits, return a
WatchRun.

COMMAND runs in its own process group with the hook folder on its PYTHONPATH (job.py), the terminal's
foreground group while it runs (it reads the terminal; Ctrl-C reaches it from there); Ctrl-C and SIGTERM
reaching envguard are forwarded to that group, and the job's exit status becomes envguard's exit code (a
signal N as 128+N).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from envguard.errors import BadInputError, UsageError
from envguard.machine.host import cpu_info
from envguard.watch import job
from envguard.watch.job import Output, Sink
from envguard.watch.records import FetchTotals, HookStatus, LoaderTotals, Sample, WatchRun
from envguard.watch.roles import label, main_pids
from envguard.watch.sampler import GpuSampler, Sampler
from envguard.watch.streams import StreamReader, read_spans

HOOK_ENV = "ENVGUARD_WATCH_HOOK"  # 0 turns the in-process hook off, like --no-hook


@dataclass(frozen=True, slots=True)
class WatchOptions:
    command: tuple[str, ...] = ()
    pid: int | None = None
    interval: float = 1.0
    duration: float | None = None
    hook: bool = True
    apply_seconds: float | None = None  # --apply-and-measure: seconds of steady loop per slice
    trace: Path | None = None  # --trace FILE.json: the hook records per-batch spans for it

    @property
    def hooked(self) -> bool:
        """The hook goes on COMMAND's PYTHONPATH (not with --no-hook, ENVGUARD_WATCH_HOOK=0 or --pid)."""
        return self.hook and os.environ.get(HOOK_ENV, "1") != "0" and bool(self.command)


def validate(options: WatchOptions) -> None:
    """Bad options and a COMMAND or PID that cannot be watched: one line, exit 2."""
    _check_trace(options)
    if not options.interval > 0:
        raise UsageError(f"--interval {options.interval:g}: must be more than 0 seconds (e.g. --interval 1)")
    if options.duration is not None and not options.duration > 0:
        raise UsageError(f"--duration {options.duration:g}: must be more than 0 seconds")
    if options.apply_seconds is not None and not 0 < options.apply_seconds < float("inf"):
        raise UsageError(
            f"--apply-and-measure {options.apply_seconds:g}: give the seconds of steady loop per slice, "
            "more than 0 (e.g. --apply-and-measure 15)"
        )
    if bool(options.command) == (options.pid is not None):
        raise UsageError(
            "give either a COMMAND after -- or --pid PID, e.g. envguard watch -- python train.py"
        )
    if options.command:
        program = options.command[0]
        found = (
            shutil.which(program) if os.sep not in program else (program if os.path.isfile(program) else None)
        )
        if found is None:
            raise BadInputError(
                f"COMMAND {program!r}: no such program on PATH; give the program to run after --"
            )
    elif options.pid is not None and options.pid <= 0:
        raise UsageError(f"--pid {options.pid}: give the process id of a running job (a positive number)")
    else:
        _check_pid(int(options.pid or 0))


def _check_trace(options: WatchOptions) -> None:
    """--trace names a file in a folder that exists, and the hook that records the spans is on."""
    path = options.trace
    if path is None:
        return
    if os.path.isdir(path):  # os.path: a name too long for the system is no folder either
        raise BadInputError(f"--trace {path}: a folder; name the file to write, e.g. {path / 'trace.json'}")
    if not os.path.isdir(path.parent):
        raise BadInputError(f"--trace {path}: folder {path.parent} does not exist; create it first")
    if not options.hooked:
        raise UsageError(
            f"--trace {path} needs the in-process hook: give a COMMAND after -- and leave out --no-hook "
            f"and {HOOK_ENV}=0"
        )


def _check_pid(pid: int) -> None:
    import psutil

    try:
        process = psutil.Process(pid)
        with process.oneshot():
            process.cpu_times()
            process.memory_info()
    except psutil.NoSuchProcess:
        raise BadInputError(f"--pid {pid}: no such process (it may have exited)") from None
    except psutil.AccessDenied:
        raise BadInputError(f"--pid {pid}: not ours to read; run envguard as the job's user") from None


class _Watch:
    """The job (started or attached), its samplers and the hook's streams while it is watched."""

    def __init__(
        self, options: WatchOptions, output: Output, sink: Sink | None, folder: Path | None = None
    ) -> None:
        """`folder`: the hook's streams of a process already hooked (an in-process watch, inprocess.py)."""
        hook = options.hooked
        self.folder = folder or (Path(tempfile.mkdtemp(prefix="envguard-watch-")) if hook else None)
        trace = options.trace is not None
        try:
            self.child = job.spawn(options.command, self.folder, output, trace) if options.command else None
        except BadInputError:
            if self.folder is not None:
                shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self.handed = job.hand_terminal(self.child) if self.child is not None else None
        self.pid = self.child.pid if self.child is not None else int(options.pid or 0)
        self.pumps = []
        if self.child is not None and output == "pipe" and sink is not None:
            self.pumps = [job.pump(s, sink) for s in (self.child.stdout, self.child.stderr) if s is not None]
        try:
            self.sampler = Sampler(self.pid, options.interval)
            self.gpus = GpuSampler()
        except BaseException:
            job.take_back(self.handed)
            raise
        self.reader = StreamReader(self.folder) if self.folder is not None else None
        self.samples: list[Sample] = []
        self.cpu_s = 0.0

    def alive(self, timeout: float) -> bool:
        if self.child is not None:
            try:
                self.child.wait(max(timeout, 0.0))
                return False
            except subprocess.TimeoutExpired:
                return True
        time.sleep(max(timeout, 0.0))
        return self.sampler.root_alive()

    def sample(self, t: float) -> Sample:
        cpu_before = time.process_time()
        loaders: tuple[LoaderTotals, ...] = ()
        if self.reader is not None:
            self.reader.poll()
            loaders = self.reader.loaders()
        procs = self.sampler.processes()
        procs = label(procs, main_pids(procs, {lt.pid for lt in loaders}))
        sample = Sample(
            t=round(t, 3),
            procs=procs,
            host=self.sampler.host(),
            gpus=self.gpus.sample({p.pid for p in procs}),
            loaders=loaders,
        )
        self.cpu_s += time.process_time() - cpu_before
        return sample


def run_watch(
    options: WatchOptions,
    on_sample: Callable[[Sample], None] | None = None,
    output: Output = "inherit",
    sink: Sink | None = None,
) -> WatchRun:
    """Watch until the job exits (or --duration passes); the result carries every sample and the exit code."""
    validate(options)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    watch = _Watch(options, output, sink)
    start = time.monotonic()
    try:
        with job.forwarding(watch.child):
            _loop(watch, options, start, on_sample)
        return _result(watch, options, started, time.monotonic() - start)
    finally:
        if watch.child is not None and watch.child.poll() is None:
            job.stop(watch.child)
        job.take_back(watch.handed)
        if watch.folder is not None:
            shutil.rmtree(watch.folder, ignore_errors=True)


def _loop(
    watch: _Watch, options: WatchOptions, start: float, on_sample: Callable[[Sample], None] | None
) -> None:
    tick = start + options.interval
    while watch.alive(tick - time.monotonic()):
        now = time.monotonic()
        sample = watch.sample(now - start)
        watch.samples.append(sample)
        if on_sample is not None:
            on_sample(sample)
        if options.duration is not None and now - start >= options.duration:
            if watch.child is not None:
                job.stop(watch.child)
            break
        tick = max(tick + options.interval, time.monotonic() + options.interval / 10)


def _result(watch: _Watch, options: WatchOptions, started: str, duration: float) -> WatchRun:
    for thread in watch.pumps:
        thread.join(timeout=2.0)
    loaders: tuple[LoaderTotals, ...] = ()
    fetches: tuple[FetchTotals, ...] = ()
    hook = HookStatus(state="off")
    spans = read_spans(watch.folder) if watch.folder is not None and options.trace is not None else ()
    if watch.reader is not None:
        watch.reader.poll()
        loaders, fetches = watch.reader.loaders(), watch.reader.fetches()
        errors = tuple(f"pid {pid}: {text}" for pid, text in sorted(watch.reader.errors.items()))
        hook = HookStatus(state="active" if loaders else "no-loader", errors=errors, env=watch.reader.env())
    code = job.exit_status(watch.child.wait()) if watch.child is not None else None
    cpus = cpu_info()
    return WatchRun(
        command=options.command,
        pid=watch.pid,
        interval=options.interval,
        started=started,
        duration=round(duration, 3),
        exit_code=code,
        usable_cpus=cpus.usable,
        physical_cpus=cpus.physical,
        hook=hook,
        samples=tuple(watch.samples),
        loaders=loaders,
        fetches=fetches,
        gpu_note=watch.gpus.note,
        sampler_cpu_s=round(watch.cpu_s, 4),
        spans=spans,
    )
