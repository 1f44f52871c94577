"""`watch_call`: watch work done in this very process (a notebook cell under %%envguard_watch): the DataLoader
hook attached here (hook/sitecustomize.py's `attach`), this process and its DataLoader workers sampled on a
thread, the same WatchRun as a watched job's, judged by the same verdicts."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from envguard.watch.hook import sitecustomize as hook
from envguard.watch.records import WatchRun
from envguard.watch.run import WatchOptions, _result, _Watch, validate


def watch_call(body: Callable[[], bool], *, interval: float = 1.0, label: str = "") -> WatchRun:
    """Run `body` here with this process's DataLoaders timed and its process tree sampled every `interval`
    seconds; the run's exit code is 0 when `body` returns True (it succeeded), else 1."""
    options = WatchOptions(pid=os.getpid(), interval=interval)
    validate(options)
    folder = Path(tempfile.mkdtemp(prefix="envguard-watch-"))
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    watch = _Watch(options, "inherit", None, folder=folder)
    done = threading.Event()
    start = time.monotonic()

    def sample() -> None:
        while not done.wait(max(0.0, interval - (time.monotonic() - start) % interval)):
            watch.samples.append(watch.sample(time.monotonic() - start))

    sampler = threading.Thread(target=sample, name="envguard-watch-sampler", daemon=True)
    state = hook.attach(str(folder))
    try:
        sampler.start()
        ok = body()
    finally:
        done.set()
        sampler.join()
        hook.detach(state)
    try:
        run = _result(watch, options, started, time.monotonic() - start)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return dataclasses.replace(run, command=(label,) if label else (), exit_code=0 if ok else 1)
