"""Read the hook's streams: one JSON-lines file per process in the watch folder, each line running totals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envguard.watch.model import LoaderTotals


class StreamReader:
    """Follows every `<pid>.jsonl` in `folder`, keeping the latest line of each (partial lines wait)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        self.latest: dict[int, dict[str, Any]] = {}
        self.errors: dict[int, str] = {}
        self.bad_lines = 0

    def poll(self) -> None:
        for path in sorted(self.folder.glob("*.jsonl")):
            try:
                with path.open("rb") as handle:
                    handle.seek(self._offsets.get(path, 0))
                    chunk = handle.read()
            except OSError:
                continue
            self._offsets[path] = self._offsets.get(path, 0) + len(chunk)
            data = self._partial.pop(path, b"") + chunk
            *lines, rest = data.split(b"\n")
            if rest:
                self._partial[path] = rest
            for line in lines:
                self._take(line)

    def _take(self, line: bytes) -> None:
        try:
            record = json.loads(line)
            pid = int(record["pid"])
        except (ValueError, KeyError, TypeError):
            self.bad_lines += 1
            return
        self.latest[pid] = record
        if record.get("error"):
            self.errors[pid] = str(record["error"])

    def loaders(self) -> tuple[LoaderTotals, ...]:
        out: list[LoaderTotals] = []
        for pid, record in sorted(self.latest.items()):
            for item in record.get("loaders") or []:
                try:
                    out.append(
                        LoaderTotals(
                            pid=pid,
                            rank=record.get("rank"),
                            id=int(item["id"]),
                            settings=dict(item["settings"]),
                            batches=int(item["batches"]),
                            epochs=int(item["epochs"]),
                            wait_s=float(item["wait_s"]),
                            step_s=float(item["step_s"]),
                            startup_s=float(item["startup_s"]),
                            first_s=float(item["first_s"]),
                        )
                    )
                except (KeyError, TypeError, ValueError):
                    self.bad_lines += 1
        return tuple(out)

    def env(self) -> dict[str, Any]:
        for _pid, record in sorted(self.latest.items()):
            if record.get("env"):
                return dict(record["env"])
        return {}
