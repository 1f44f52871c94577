"""The in-process hook's JSON lines parsed once into records: one line is a process's running totals (its
loaders with their settings, its rank, the job's environment, the hook's own error). The hook's side of this
contract is hook/sitecustomize.py (`_State.line`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from envguard.watch.records import FetchTotals, JobEnvironment, LoaderSettings, LoaderTotals


class WireError(ValueError):
    """A line that is not one of the hook's (not JSON, no pid)."""


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


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def settings(data: Mapping[str, Any]) -> LoaderSettings:
    return LoaderSettings(
        num_workers=_int(data.get("num_workers")),
        pin_memory=_flag(data.get("pin_memory")),
        persistent_workers=_flag(data.get("persistent_workers")),
        prefetch_factor=_int(data.get("prefetch_factor")),
        batch_size=_int(data.get("batch_size")),
        dataset=_text(data.get("dataset")),
        threads=_int(data.get("threads")),
    )


def environment(data: Any) -> JobEnvironment | None:
    """The job's environment; None until the hook has seen a DataLoader (it sends {} until then)."""
    if not isinstance(data, Mapping) or not data:
        return None
    return JobEnvironment(
        python=_text(data.get("python")),
        executable=_text(data.get("executable")),
        torch=_text(data.get("torch")),
        torch_cuda=_text(data.get("torch_cuda")),
        torch_git=_text(data.get("torch_git")),
        numpy=_text(data.get("numpy")),
        cuda_visible_devices=_text(data.get("cuda_visible_devices")),
    )


def loader(pid: int, rank: int | None, item: Mapping[str, Any]) -> LoaderTotals:
    """One loader's totals; KeyError, TypeError or ValueError when the entry is not whole."""
    if not isinstance(item["settings"], Mapping):
        raise TypeError("settings is not an object")
    return LoaderTotals(
        pid=pid,
        rank=rank,
        id=int(item["id"]),
        settings=settings(item["settings"]),
        batches=int(item["batches"]),
        epochs=int(item["epochs"]),
        wait_s=float(item["wait_s"]),
        step_s=float(item["step_s"]),
        startup_s=float(item["startup_s"]),
        first_s=float(item["first_s"]),
        wait_cpu_s=float(item.get("wait_cpu_s") or 0.0),
        step_cpu_s=float(item.get("step_cpu_s") or 0.0),
    )


def fetch(pid: int, ppid: int, worker: bool, item: Mapping[str, Any]) -> FetchTotals:
    """One dataset's batch production in one process; KeyError, TypeError or ValueError when not whole."""
    walls = item.get("walls") or []
    if not isinstance(walls, list):
        raise TypeError("walls is not a list")
    return FetchTotals(
        pid=pid,
        ppid=ppid,
        worker=worker,
        dataset=str(item["dataset"]),
        batches=int(item["batches"]),
        wall_s=float(item["wall_s"]),
        cpu_s=float(item["cpu_s"]),
        delay_s=float(item["delay_s"]),
        walls=tuple(float(w) for w in walls),
        off_s=float(item["off_s"]) if item.get("off_s") is not None else None,
    )


def parse_line(line: bytes) -> HookLine:
    """A line of a `<pid>.jsonl` stream as its record; WireError when it is not one of the hook's."""
    try:
        record = json.loads(line)
        pid = int(record["pid"])
    except (ValueError, KeyError, TypeError) as exc:
        raise WireError(f"not a hook line: {exc}") from None
    rank = _int(record.get("rank"))
    loaders: list[LoaderTotals] = []
    bad = 0
    for item in record.get("loaders") or []:
        try:
            loaders.append(loader(pid, rank, item))
        except (KeyError, TypeError, ValueError):
            bad += 1
    fetches: list[FetchTotals] = []
    ppid, worker = _int(record.get("ppid")) or 0, bool(record.get("worker"))
    for item in record.get("fetch") or []:
        try:
            fetches.append(fetch(pid, ppid, worker, item))
        except (KeyError, TypeError, ValueError):
            bad += 1
    return HookLine(
        pid=pid,
        rank=rank,
        env=environment(record.get("env")),
        error=str(record.get("error") or ""),
        loaders=tuple(loaders),
        bad_loaders=bad,
        fetches=tuple(fetches),
    )
