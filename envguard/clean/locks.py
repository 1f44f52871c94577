"""Cache locks of conda, mamba and rattler: who holds one now, and holding them ourselves while we move
things.

Conventions (from the tools' sources):
- rattler/pixi: `PKGS/.cache.lock`, an exclusive flock for the whole cache while installing; older rattler
  also
  flocked each `PKGS/NAME-VER-BUILD.lock` (today those hold a revision and sha256, unlocked).
- mamba/micromamba (libmamba LockFile): a folder `D` is locked through `D/<basename D>.lock` (so
  `pkgs/pkgs.lock`,
  `pkgs/cache/cache.lock`), a POSIX record lock on byte 21, the holder's PID written into the file.
- envguard: a shared flock on `PKGS/.envguard-install.lock` from fetching archives to linking them.
- conda 26: a POSIX record lock on byte 21 of a download's `.partial` file while it writes it.
- conda >= 23: a POSIX record lock on byte 21 ("mamba interop") of the repodata state files
  `pkgs/cache/*.info.json`
  while it updates them; conda <= 4.3 created `*.pid<PID>.conda_lock` files.
Holders are found in /proc/locks (Linux), which names the PID; elsewhere by trying the lock.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from envguard.clean.model import Cache, LockHolder
from envguard.engine.cacheuse import CACHE_USER_LOCK as ENVGUARD_LOCK
from envguard.errors import OperationalError
from envguard.process import alive

LOCK_BYTE = 21
_PROC_LOCK = re.compile(r"^\d+:\s+(?:->\s+)?(\S+)\s+\S+\s+\S+\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s")
_LEGACY = re.compile(r"\.pid(\d+)\.conda_lock$")


def proc_locks(text: str | None = None) -> dict[tuple[int, int, int], list[tuple[str, int]]]:
    """(major, minor, inode) -> [(FLOCK|POSIX|OFDLCK, pid)] from /proc/locks; empty where there is none."""
    if text is None:
        try:
            with open("/proc/locks", encoding="ascii", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return {}
    table: dict[tuple[int, int, int], list[tuple[str, int]]] = {}
    for line in text.splitlines():
        match = _PROC_LOCK.match(line)
        if match:
            key = (int(match.group(3), 16), int(match.group(4), 16), int(match.group(5)))
            table.setdefault(key, []).append((match.group(1), int(match.group(2))))
    return table


def lock_files(cache: Cache) -> list[tuple[str, str, int, int]]:
    """(path, convention, st_dev, inode) of every lock file the tools may hold in this cache (inodes straight
    from the directory listing: no stat per file)."""
    found: list[tuple[str, str, int, int]] = []
    for folder in (cache.pkgs, *cache.index_dirs):
        try:
            device = os.stat(folder).st_dev
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            convention = _convention(entry.name, folder, cache)
            if convention:
                found.append((entry.path, convention, device, entry.inode()))
    return found


def _convention(name: str, folder: Path, cache: Cache) -> str | None:
    if name == ".cache.lock":
        return "rattler"
    if name == ENVGUARD_LOCK:
        return "envguard install"
    if name.endswith(".partial") and folder == cache.pkgs:
        return "conda download"  # conda 26 locks a download's .partial file (byte 21) while it writes
    if name == f"{folder.name}.lock":
        return "mamba"
    if name.endswith(".lock"):
        return "rattler package" if folder == cache.pkgs else "mamba"
    if name.endswith(".info.json") and folder != cache.pkgs:
        return "conda repodata"
    if _LEGACY.search(name):
        return "conda (legacy)"
    return None


def holders(cache: Cache, *, ignore_pid: int | None = None) -> tuple[LockHolder, ...]:
    """Live holders of this cache's locks (other than `ignore_pid`)."""
    table = proc_locks()
    result: list[LockHolder] = []
    for name, convention, device, inode in lock_files(cache):
        legacy = _LEGACY.search(name)
        if legacy:
            pid = int(legacy.group(1))
            if pid != ignore_pid and alive(pid):
                result.append(LockHolder(Path(name), convention, pid, command_of(pid)))
            continue
        for _kind, pid in table.get((os.major(device), os.minor(device), inode), []):
            if pid != ignore_pid:
                known = pid if pid > 0 else _pid_in_file(Path(name))
                result.append(LockHolder(Path(name), convention, known, command_of(known) if known else None))
    return tuple(result)


def _pid_in_file(path: Path) -> int | None:
    """mamba writes its PID into the lock file."""
    try:
        text = path.read_bytes()[:20].decode("ascii", errors="replace").strip("\x00 \n")
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def command_of(pid: int) -> str | None:
    """The command line of a process (Linux /proc), shortened, or None."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    words = [w.decode("utf-8", errors="replace") for w in raw.split(b"\0") if w]
    if not words:
        return None
    words[0] = os.path.basename(words[0])
    text = " ".join(" ".join(words).split())  # one line, whatever the arguments held
    return text if len(text) <= 80 else text[:77] + "..."


@contextlib.contextmanager
def hold(caches: Sequence[Cache]) -> Iterator[None]:
    """Take rattler's and mamba's cache-wide locks for the duration (so no install starts meanwhile); refuse
    with the holder named when any lock of these caches is held by another process."""
    with contextlib.ExitStack() as stack:
        for cache in caches:
            _take(stack, cache)
        yield


def _take(stack: contextlib.ExitStack, cache: Cache) -> None:
    try:
        import fcntl
    except ImportError:  # no POSIX locks here (Windows): rely on the holders check below
        fcntl = None  # type: ignore[assignment]
    for path, convention in (
        (cache.pkgs / ".cache.lock", "flock"),
        (cache.pkgs / ENVGUARD_LOCK, "flock"),
        (cache.pkgs / f"{cache.pkgs.name}.lock", "posix"),
    ):
        if fcntl is None or not path.is_file() or path.is_symlink():
            continue
        try:
            handle = stack.enter_context(open(path, "r+b"))  # noqa: SIM115 - closed by the ExitStack
        except OSError:
            continue
        try:
            if convention == "flock":
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                fcntl.lockf(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, LOCK_BYTE)
        except OSError:
            _refuse(cache, path)
    others = holders(cache, ignore_pid=os.getpid())
    if others:
        raise OperationalError(_message(cache, others))


def _refuse(cache: Cache, path: Path) -> None:
    found = holders(cache, ignore_pid=os.getpid()) or (LockHolder(path, "cache", _pid_in_file(path)),)
    raise OperationalError(_message(cache, found))


def _message(cache: Cache, found: Sequence[LockHolder]) -> str:
    return (
        f"{cache.root} is in use: {found[0].describe()}; wait for it to finish and run envguard clean again "
        "(nothing was changed)"
    )
