"""The smoke test's heartbeat: where it is, for the envguard side to read if it has to stop it at the budget.

Every process that reads the dataset (the main process and each DataLoader worker) keeps one small file in the
watch folder, named by its pid, saying which sample it is reading and since when (`1 <time> <index>`) or that
it returned it (`0 ...`), or that it ran out of memory reading it (`2 <time> <bytes held> <index>`: the run
ends there, issue 28). A hung `__getitem__` thus names itself: "the dataset did not return sample K within
S s". The main process also writes `phase` (what it is doing). Writes are one pwrite each (microseconds).
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Dict, Iterator, Optional, Tuple

from torch.utils.data import Dataset, IterableDataset

from . import memory_limit

RECORD = 160  # bytes per record, space padded
_FDS: Dict[Tuple[int, str], int] = {}


def _fd(folder: str) -> int:
    key = (os.getpid(), folder)  # a forked worker inherits the parent's table: key by pid
    fd = _FDS.get(key)
    if fd is None:
        fd = os.open(os.path.join(folder, "p%d" % os.getpid()), os.O_WRONLY | os.O_CREAT, 0o600)
        _FDS[key] = fd
    return fd


READING, READ, OUT_OF_MEMORY = 1, 0, 2  # a record's state


def mark(folder: Optional[str], reading: bool, index: Any) -> None:
    """Record that this process starts (`reading`) or finished reading sample `index`."""
    _write(folder, READING if reading else READ, index)


def failed(folder: Optional[str], exc: BaseException, index: Any) -> None:
    """Reading sample `index` raised `exc`: when it is this process running out of memory, the reserve is
    given back (room to report it) and the record says so, for envguard to end the run on even if the error
    is lost on its way to the main process."""
    if memory_limit.note(exc):
        _write(folder, OUT_OF_MEMORY, "%d %s" % (memory_limit.held_bytes() or 0, index))


def _refuse_when_exhausted() -> None:
    """A process that ran out of memory reads no more samples: the next read would take the reserve kept for
    reporting it (a worker goes on with the indices queued for it until the main process stops it)."""
    if memory_limit.exhausted():
        raise MemoryError("this process ran out of memory under its memory limit")


def _write(folder: Optional[str], state: int, index: Any) -> None:
    if not folder:
        return
    text = "%d %.6f %s" % (state, time.time(), str(index)[:100])
    with contextlib.suppress(OSError):  # the folder went away (envguard stopped us): nothing to record
        os.pwrite(_fd(folder), text.encode("utf-8", "replace").ljust(RECORD)[:RECORD], 0)


def phase(folder: Optional[str], text: str) -> None:
    """What the main process is doing now (read only when the run has to be stopped)."""
    if not folder:
        return
    path = os.path.join(folder, "phase")
    try:
        with open(path + ".tmp", "w") as handle:
            handle.write(text)
        os.replace(path + ".tmp", path)
    except OSError:
        pass


class Watched(Dataset):  # type: ignore[type-arg]
    """A map-style dataset whose every read is recorded in the watch folder."""

    def __init__(self, inner: Any, folder: str) -> None:
        self.inner, self.folder = inner, folder

    def __setstate__(self, state: Dict[str, Any]) -> None:
        memory_limit.adopt()  # a spawn/forkserver worker receiving it: the limit on its own start-up
        self.__dict__.update(state)

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, index: Any) -> Any:
        _refuse_when_exhausted()
        mark(self.folder, True, index)
        try:
            item = self.inner[index]
        except Exception as exc:
            failed(self.folder, exc, index)
            raise
        mark(self.folder, False, index)
        return item


class WatchedIterable(IterableDataset):  # type: ignore[type-arg]
    """The same for an IterableDataset: the `index` is the position in this worker's stream."""

    def __init__(self, inner: Any, folder: str) -> None:
        self.inner, self.folder = inner, folder

    def __setstate__(self, state: Dict[str, Any]) -> None:
        memory_limit.adopt()  # a spawn/forkserver worker receiving it: the limit on its own start-up
        self.__dict__.update(state)

    def __iter__(self) -> Iterator[Any]:
        source = iter(self.inner)
        position = 0
        while True:
            _refuse_when_exhausted()
            mark(self.folder, True, "#%d of the stream" % position)
            try:
                item = next(source)
            except StopIteration:
                mark(self.folder, False, position)
                return
            except Exception as exc:
                failed(self.folder, exc, "#%d of the stream" % position)
                raise
            mark(self.folder, False, position)
            position += 1
            yield item


def wrap(dataset: Any, folder: Optional[str]) -> Any:
    """`dataset` watched when there is a watch folder; itself otherwise."""
    if not folder:
        return dataset
    return (
        WatchedIterable(dataset, folder) if isinstance(dataset, IterableDataset) else Watched(dataset, folder)
    )


def partial(folder: Optional[str], result: Dict[str, Any]) -> None:
    """The results so far, for envguard to use if it has to stop the run at the budget (atomic replace)."""
    if not folder:
        return
    import json

    path = os.path.join(folder, "partial.json")
    with contextlib.suppress(OSError, TypeError, ValueError):
        with open(path + ".tmp", "w") as handle:
            json.dump(result, handle, sort_keys=True)
        os.replace(path + ".tmp", path)
