"""`watch --trace FILE.json`: the run's per-batch spans as a Chrome trace-event file, the JSON format
ui.perfetto.dev and chrome://tracing open (Google's "Trace Event Format": `traceEvents` of complete "X"
events, ts/dur in microseconds, and "M" metadata naming each process and thread).

One track per process: the training loop's (`data wait` in next(), `step` between two next() calls, `first
batch` of each epoch; `fetch` inside the wait where it loads in the main process) and each DataLoader worker's
(`fetch`, its dataset in args), each worker sorted under its loop. Times are the processes' shared monotonic
clock (CLOCK_MONOTONIC on Linux), else each process's own clock placed by its wall-clock reading; 0 is the
first span."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from envguard.atomic import write_bytes
from envguard.watch.records import Span, SpanStream, WatchRun

NAMES = {"wait": "data wait", "step": "step", "first": "first batch", "fetch": "fetch"}
SHARED_CLOCK = "CLOCK_MONOTONIC"  # time.perf_counter's clock on Linux: the same in every process of a host


def _offsets(streams: tuple[SpanStream, ...]) -> dict[int, float]:
    """Seconds to add to each process's span times to put every process on one clock."""
    if all(SHARED_CLOCK in s.header.clock for s in streams):
        return {s.header.pid: 0.0 for s in streams}
    return {s.header.pid: s.header.wall - s.header.perf for s in streams}


def _ordered(streams: tuple[SpanStream, ...]) -> list[SpanStream]:
    """Each loop's process (not a DataLoader worker) by pid, its workers after it by worker id."""
    loops = [s for s in streams if s.header.worker is None]
    pids = {s.header.pid for s in loops}
    out: list[SpanStream] = []
    for loop in loops:
        out.append(loop)
        out += sorted(
            (s for s in streams if s.header.worker is not None and s.header.ppid == loop.header.pid),
            key=lambda s: (s.header.worker or 0, s.header.pid),
        )
    return out + [s for s in streams if s.header.worker is not None and s.header.ppid not in pids]


def _process_name(stream: SpanStream) -> str:
    header = stream.header
    if header.worker is not None:
        return f"DataLoader worker {header.worker} (pid {header.pid})"
    rank = f" rank {header.rank}" if header.rank is not None else ""
    return f"main{rank} (pid {header.pid})"


def _metadata(index: int, stream: SpanStream) -> list[dict[str, Any]]:
    pid = stream.header.pid
    threads = sorted({span.thread for span in stream.spans})
    track = "fetch" if stream.header.worker is not None else "training loop"
    return [
        {"name": "process_name", "ph": "M", "pid": pid, "tid": pid, "args": {"name": _process_name(stream)}},
        {"name": "process_sort_index", "ph": "M", "pid": pid, "tid": pid, "args": {"sort_index": index}},
        *(
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": track}}
            for tid in threads
        ),
    ]


def _event(span: Span, pid: int, shift: float) -> dict[str, Any]:
    args: dict[str, Any] = {"dataset": span.dataset}
    if span.loader >= 0:
        args["loader"] = span.loader
    return {
        "name": NAMES[span.kind],
        "cat": "dataloader",
        "ph": "X",
        "ts": round((span.start + shift) * 1e6, 3),
        "dur": round(max(0.0, span.end - span.start) * 1e6, 3),
        "pid": pid,
        "tid": span.thread,
        "args": args,
    }


def trace_document(run: WatchRun) -> dict[str, Any]:
    """The trace-event JSON object of `run`'s spans (empty traceEvents without any)."""
    streams = run.spans
    offsets = _offsets(streams)
    starts = [span.start + offsets[s.header.pid] for s in streams for span in s.spans]
    origin = min(starts, default=0.0)
    events: list[dict[str, Any]] = []
    for index, stream in enumerate(_ordered(streams)):
        events += _metadata(index, stream)
        shift = offsets[stream.header.pid] - origin
        events += (_event(span, stream.header.pid, shift) for span in stream.spans)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"command": " ".join(run.command), "started": run.started, "writer": "envguard watch"},
    }


def write_trace(run: WatchRun, path: Path) -> int:
    """Write `run`'s trace to `path` atomically; the number of spans in it."""
    write_bytes(path, msgspec.json.encode(trace_document(run)))
    return sum(len(s.spans) for s in run.spans)
