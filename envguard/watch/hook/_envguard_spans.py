"""Per-batch timing for envguard watch's hook (sitecustomize.py calls it): a uniform sample of the loop's
per-batch data waits (always), and, when watch was asked for a trace ($ENVGUARD_WATCH_TRACE), each batch's
spans: the loop's `wait` in next() and its `step` between two next() calls, and each `fetch` (producing one
batch, in whichever process loads it).

Standalone like sitecustomize (stdlib only, Python 3.8 syntax; the name keeps it from shadowing a module of
the job's). Spans go to $ENVGUARD_WATCH_DIR/<pid>.spans, JSON lines decoded by watch/spans.py: a header
(this process, its clock) then one array per span `[kind, start, end, thread, loader, dataset]`, times in
seconds of time.perf_counter() (CLOCK_MONOTONIC on Linux: one clock for every process of the host; the
header's wall/perf pair places them where it is not). Bounded: the file keeps the last SPANS_KEPT spans of
this process, rewritten (atomically) from memory whenever it holds twice that.
"""

from __future__ import annotations

import collections
import json
import os
import random
import sys
import threading
import time
from typing import Any, Dict, List, Optional

TRACE_ENV = "ENVGUARD_WATCH_TRACE"
SPANS_KEPT = 20000  # per process: the last 10,000 batches of a loop (a wait and a step each)
WAITS_KEPT = 256  # per loader: a uniform sample of its per-batch data waits (their p50/p95)
_RANDOM = random.Random()  # never the job's own random state


def keep_wait(stats: Dict[str, Any], wait: float) -> None:
    """Keep `wait` in the loader's sample (reservoir sampling over its `batches` so far, counted already)."""
    kept: List[float] = stats.setdefault("waits", [])
    if len(kept) < WAITS_KEPT:
        kept.append(round(wait, 6))
        return
    slot = _RANDOM.randrange(max(stats["batches"], WAITS_KEPT))
    if slot < WAITS_KEPT:
        kept[slot] = round(wait, 6)


class _Spans:
    """This process's spans: the last SPANS_KEPT in memory, those not yet written, the file's span count."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.pid = -1
        self._start()

    def _start(self) -> None:
        """(Again, in a forked DataLoader worker:) this process's own spans and file."""
        self.pid = os.getpid()
        self.path = os.path.join(self.folder, "%d.spans" % self.pid)
        self.kept = collections.deque(maxlen=SPANS_KEPT)  # type: Any
        self.pending = []  # type: List[Any]
        self.written = 0

    def add(self, kind: str, start: float, end: float, loader: int, dataset: str) -> None:
        if os.getpid() != self.pid:
            self._start()
        span = (kind, round(start, 6), round(end, 6), threading.get_native_id(), loader, dataset)
        self.kept.append(span)
        self.pending.append(span)

    def flush(self) -> None:
        if os.getpid() != self.pid or not self.pending:
            return  # a forked worker's copy of its parent's spans is not its own
        if self.written + len(self.pending) > 2 * SPANS_KEPT:
            self._rewrite()
            return
        data = "".join(_line(span) for span in self.pending)
        if not self.written:
            data = _line(_header()) + data
        append(self.path, data)
        self.written += len(self.pending)
        self.pending = []

    def _rewrite(self) -> None:
        """The file replaced by the header and the spans kept (a reader sees the old file or the new one)."""
        temporary = self.path + ".tmp"
        with open(temporary, "w") as handle:
            handle.write(_line(_header()) + "".join(_line(span) for span in self.kept))
        os.replace(temporary, self.path)
        self.written, self.pending = len(self.kept), []


def _line(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) + "\n"


def append(path: str, data: str) -> None:
    """`data` appended to the file at `path` in one write (made 0600 where new)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data.encode())
    finally:
        os.close(fd)


def _header() -> Dict[str, Any]:
    """This process (its parent, its DataLoader worker id, its rank) and its clock against the wall clock."""
    data = sys.modules.get("torch.utils.data")
    info = None
    try:
        info = data.get_worker_info() if data is not None else None
    except Exception:
        pass
    rank = os.environ.get("RANK")
    return {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "worker": getattr(info, "id", None),
        "rank": int(rank) if rank and rank.isdigit() else None,
        "clock": time.get_clock_info("perf_counter").implementation,
        "perf": time.perf_counter(),
        "wall": time.time(),
    }


def tracer(folder: str) -> Optional[_Spans]:
    """This process's spans in `folder` when watch asked for a trace, else None (nothing is recorded)."""
    return _Spans(folder) if os.environ.get(TRACE_ENV) == "1" else None


def batch(spans: Optional[_Spans], stats: Dict[str, Any], start: float, end: float, last: Any) -> None:
    """One next() of a loader, from `start` to `end` (`last`: the previous one's end and CPU, None at an
    epoch's first batch): its wait kept, and with a trace, the wait and the step before it as spans."""
    if last is not None:
        keep_wait(stats, end - start)
    if spans is not None:
        loader, dataset = stats["id"], stats["settings"]["dataset"]
        if last is not None:
            spans.add("step", last[0], start, loader, dataset)
        spans.add("wait" if last is not None else "first", start, end, loader, dataset)


def fetched(spans: Optional[_Spans], dataset: str, start: float, end: float) -> None:
    """One batch produced (fetch and collate) in this process, with a trace."""
    if spans is not None:
        spans.add("fetch", start, end, -1, dataset)


def flush(spans: Optional[_Spans]) -> None:
    if spans is not None:
        spans.flush()
