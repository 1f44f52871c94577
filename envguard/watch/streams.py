"""Follow the hook's streams: one JSON-lines file per process in the watch folder, each line a process's
running totals (its loaders with their settings, its rank, the job's environment, the hook's own error),
decoded once into records; and, with --trace, each process's per-batch spans (`<pid>.spans`). The hook's side
of this contract is hook/sitecustomize.py (`_State.line`) and hook/_envguard_spans.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from envguard.watch.records import (
    ApplyReport,
    FetchTotals,
    JobEnvironment,
    LoaderTotals,
    Span,
    SpanHeader,
    SpanStream,
)


class WireError(ValueError):
    """A line that is not one of the hook's (not JSON, no pid)."""


class _Line(msgspec.Struct, frozen=True):
    """A line as printed; its entries decoded one by one, so one that is not whole is skipped and counted."""

    pid: int
    rank: int | None = None
    ppid: int | None = None
    worker: bool = False
    env: JobEnvironment | None = None
    error: str | None = None
    loaders: tuple[dict[str, Any], ...] = ()
    fetch: tuple[dict[str, Any], ...] = ()
    apply: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class HookLine:
    """One line of a process's stream; `bad_loaders`: loader entries that could not be read (skipped)."""

    pid: int
    rank: int | None
    env: JobEnvironment | None
    error: str
    loaders: tuple[LoaderTotals, ...]
    bad_loaders: int = 0
    fetches: tuple[FetchTotals, ...] = ()
    apply: ApplyReport | None = None  # --apply-and-measure's slice, in a process that is not a worker


_DECODER = msgspec.json.Decoder(_Line)
T = TypeVar("T")
NO_ENVIRONMENT = JobEnvironment()  # the hook sends {} until it has seen a DataLoader


def parse_line(line: bytes) -> HookLine:
    """A line of a `<pid>.jsonl` stream as its record; WireError when it is not one of the hook's."""
    try:
        record = _DECODER.decode(line)
    except msgspec.DecodeError as exc:
        raise WireError(f"not a hook line: {exc}") from None
    line_fields = {"pid": record.pid, "rank": record.rank}
    loaders = _entries(record.loaders, LoaderTotals, line_fields)
    fetch_fields = {"pid": record.pid, "ppid": record.ppid or 0, "worker": record.worker}
    fetches = _entries(record.fetch, FetchTotals, fetch_fields)
    applied = _entries((record.apply,), ApplyReport, {}) if record.apply and not record.worker else [None]
    return HookLine(
        pid=record.pid,
        rank=record.rank,
        env=None if record.env == NO_ENVIRONMENT else record.env,
        error=record.error or "",
        loaders=tuple(e for e in loaders if e is not None),
        bad_loaders=sum(e is None for e in (*loaders, *fetches)),
        fetches=tuple(e for e in fetches if e is not None),
        apply=applied[0],
    )


def _entries(items: tuple[dict[str, Any], ...], kind: type[T], line: dict[str, Any]) -> list[T | None]:
    """Each entry with its line's fields, as `kind`; None for one that is not whole."""
    out: list[T | None] = []
    for item in items:
        try:
            out.append(msgspec.convert({**item, **line}, kind))
        except msgspec.ValidationError:
            out.append(None)
    return out


class StreamReader:
    """Follows every `<pid>.jsonl` in `folder`, keeping the latest line of each (partial lines wait)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        self.latest: dict[int, HookLine] = {}
        self.errors: dict[int, str] = {}
        self.bad_lines = 0  # lines (and loader entries) that could not be read

    def poll(self) -> None:
        for path in sorted(self.folder.glob("*.jsonl")):
            offset = self._offsets.get(path, 0)
            try:
                with path.open("rb") as handle:
                    handle.seek(offset)
                    chunk = handle.read()
            except OSError:
                continue
            self._offsets[path] = offset + len(chunk)
            data = self._partial.pop(path, b"") + chunk
            *lines, rest = data.split(b"\n")
            if rest:
                self._partial[path] = rest
            for line in lines:
                self._take(line)

    def _take(self, raw: bytes) -> None:
        try:
            line = parse_line(raw)
        except WireError:
            self.bad_lines += 1
            return
        self.bad_lines += line.bad_loaders
        self.latest[line.pid] = line
        if line.error:
            self.errors[line.pid] = line.error

    def loaders(self) -> tuple[LoaderTotals, ...]:
        return tuple(lt for _pid, line in sorted(self.latest.items()) for lt in line.loaders)

    def fetches(self) -> tuple[FetchTotals, ...]:
        """Every process's batch production (workers' streams included)."""
        return tuple(ft for _pid, line in sorted(self.latest.items()) for ft in line.fetches)

    def applied(self) -> dict[int, ApplyReport]:
        """--apply-and-measure's report from each process that is not a DataLoader worker, by pid."""
        return {pid: line.apply for pid, line in sorted(self.latest.items()) if line.apply is not None}

    def env(self) -> JobEnvironment | None:
        """The job's environment from the first process (by pid) that reported one."""
        return next((line.env for _pid, line in sorted(self.latest.items()) if line.env is not None), None)


_HEADER = msgspec.json.Decoder(SpanHeader)
_SPAN = msgspec.json.Decoder(Span)


def read_spans(folder: Path) -> tuple[SpanStream, ...]:
    """Every process's spans in `folder` (read once the job has exited), by pid; a file without a whole
    header is skipped, a line that is not a span (cut short by a kill) is counted in `bad`."""
    streams: list[SpanStream] = []
    for path in sorted(folder.glob("*.spans"), key=lambda p: p.stem):
        try:
            first, *lines = path.read_bytes().splitlines()
            header = _HEADER.decode(first)
        except (OSError, ValueError, msgspec.DecodeError):
            continue
        spans: list[Span] = []
        for line in lines:
            try:
                spans.append(_SPAN.decode(line))
            except msgspec.DecodeError:
                continue
        streams.append(SpanStream(header, tuple(spans), bad=len(lines) - len(spans)))
    return tuple(sorted(streams, key=lambda s: s.header.pid))
