"""Follow the hook's streams: one JSON-lines file per process in the watch folder, each line running totals
(parsed by wire.py)."""

from __future__ import annotations

from pathlib import Path

from envguard.watch.records import FetchTotals, JobEnvironment, LoaderTotals
from envguard.watch.wire import HookLine, WireError, parse_line


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

    def env(self) -> JobEnvironment | None:
        """The job's environment from the first process (by pid) that reported one."""
        return next((line.env for _pid, line in sorted(self.latest.items()) if line.env is not None), None)
