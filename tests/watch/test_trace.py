"""`envguard watch --trace FILE.json`: a Chrome trace-event file (what ui.perfetto.dev and chrome://tracing
open) of a real DataLoader job, every event checked against the Trace Event Format's documented fields."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tests.watch.helpers import Watch, run_envguard

# the Trace Event Format (Google's "Trace Event Format" document): a JSON object with traceEvents; a complete
# event ("X") has name, ph, ts and dur in microseconds, pid and tid; a metadata event ("M") names a process or
# a thread in args.name
COMPLETE = {"name": str, "ph": str, "ts": (int, float), "dur": (int, float), "pid": int, "tid": int}


def _check_event(event: dict[str, Any]) -> None:
    assert event["ph"] in ("X", "M"), event
    if event["ph"] == "M":
        assert event["name"] in ("process_name", "thread_name", "process_sort_index"), event
        assert isinstance(event["pid"], int) and isinstance(event["args"], dict), event
        return
    for key, kind in COMPLETE.items():
        assert isinstance(event[key], kind), (key, event)
    assert event["dur"] >= 0 and event["ts"] >= 0, event
    assert isinstance(event.get("args", {}), dict)


def test_a_trace_of_a_job_with_two_workers(tmp_path: Path, watch: Watch) -> None:
    trace = tmp_path / "trace.json"
    job = ("--workers", "2", "--batches", "60", "--sleep-ms", "5", "--step-ms", "5")
    watched = watch(*job, extra=("--trace", str(trace)))
    assert watched.code == 0, watched.stderr
    document = json.loads(trace.read_text())
    assert document["displayTimeUnit"] == "ms"
    events = document["traceEvents"]
    for event in events:
        _check_event(event)
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    (main,) = [pid for pid, name in names.items() if name.startswith("main (pid ")]
    workers = sorted(name for name in names.values() if name.startswith("DataLoader worker "))
    assert [w.split(" (pid")[0] for w in workers] == ["DataLoader worker 0", "DataLoader worker 1"]
    spans = Counter((e["pid"] == main, e["name"]) for e in events if e["ph"] == "X")
    (loader,) = watched.report["run"]["loaders"]
    batches = loader["batches"]
    assert spans[True, "data wait"] == spans[True, "step"] == batches  # every steady batch
    assert spans[True, "first batch"] == 1
    # every batch the workers produced (the loop stops at 60; workers may have fetched a few ahead)
    assert batches < spans[False, "fetch"] <= batches + 1 + 2 * 2 * 2
    fetches = [e for e in events if e["name"] == "fetch"]
    assert {e["args"]["dataset"] for e in fetches} == {"Images"}
    assert all(e["dur"] >= 4 * 5 * 1000 * 0.9 for e in fetches)  # 4 samples x 5 ms of sleep each, in µs
    waits = [e for e in events if e["name"] == "data wait"]
    steps = [e for e in events if e["name"] == "step"]
    assert all(s["dur"] >= 5000 * 0.9 for s in steps)
    # one clock for every process: the workers' fetches lie within the loop's time (a few seconds either side:
    # workers start before the first batch and prefetch past the last)
    loop = [e for e in events if e["pid"] == main and e["ph"] == "X"]
    start, end = min(e["ts"] for e in loop), max(e["ts"] + e["dur"] for e in loop)
    assert all(start - 5e6 < e["ts"] < end + 5e6 for e in fetches)
    assert len(waits) == len(steps)
    assert "trace" in watched.stderr.lower() and str(trace) in watched.stderr


def test_a_trace_needs_the_hook_and_a_folder_that_exists(tmp_path: Path, train_script: Path) -> None:
    job = ("--", sys.executable, str(train_script), "--batches", "5")
    for bad, said in (
        (("--trace", str(tmp_path / "missing" / "t.json")), "missing"),
        (("--trace", str(tmp_path / "t.json"), "--no-hook"), "--no-hook"),
        (("--trace", str(tmp_path)), "a folder"),
    ):
        done = run_envguard("watch", *bad, *job)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and said in done.stderr, done.stderr
        assert "trained" not in done.stdout + done.stderr  # refused before the job ran
