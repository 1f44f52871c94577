"""Missing and altered files of a prefix, checked against each conda package's conda-meta `paths_data` and
each pip package's dist-info RECORD (sha256 and size; in venvs too).

Unlike `conda doctor` (which compares `sha256_in_prefix` only, so it misses edits in rattler- or pixi-made
environments), this compares `sha256_in_prefix` when the installer wrote it and the package's own `sha256` and
`size_in_bytes` otherwise. Files whose content cannot be verified (rewritten at install time for a prefix
placeholder without `sha256_in_prefix`, or listed by an old record without `paths_data`) are checked for
existence and counted as unverified. Compiled `.pyc` files are skipped: Python regenerates them. A FIFO,
socket or device in a file's place is named as such and never read (opened without blocking, then fstat).

Speed: files are checked in batches of `BATCH` on a few threads (hashlib and file reads release the GIL), a
file up to `SMALL` bytes is read in one call, and batches are made while records are read and their results
collected as they finish, so memory stays bounded by the few batches in flight (not by the number of files).
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from envguard.prefix.pip_dist import record_files, site_packages_dirs
from envguard.prefix.records import iter_records
from envguard.textio import open_nonblocking, special_kind

if TYPE_CHECKING:
    from concurrent.futures import Future

Problem = Literal["missing", "altered"]
EXISTENCE_ONLY = frozenset(
    {
        "softlink",
        "directory",
        "unix_python_entry_point",
        "windows_python_entry_point_script",
        "windows_python_entry_point_exe",
        "linked_package_record",
    }
)


@dataclass(frozen=True, slots=True)
class FileProblem:
    """One file that differs from what its package installed."""

    package: str
    path: str
    problem: Problem
    detail: str


@dataclass(frozen=True, slots=True)
class IntegrityReport:
    prefix: str
    packages: int
    files: int
    unverified: int
    problems: tuple[FileProblem, ...]

    def by_package(self) -> dict[str, list[FileProblem]]:
        grouped: dict[str, list[FileProblem]] = {}
        for item in self.problems:
            grouped.setdefault(item.package, []).append(item)
        return grouped


BATCH = 512  # files per task: one Future per file made the pool's bookkeeping the bottleneck
SMALL = 1 << 16  # files up to this size are hashed from one read
CHUNK = 1 << 20
# (package label, path, path_type, expected sha256 or None, expected size or None)
_Expected = tuple[str, str, str, str | None, int | None]


def _entries(record: dict[str, Any]) -> list[dict[str, Any]]:
    data = record.get("paths_data")
    if isinstance(data, dict):
        data = data.get("paths")
    if isinstance(data, list):
        entries = [e for e in data if isinstance(e, dict) and isinstance(e.get("_path"), str)]
        return _noarch_python_paths(record, entries)
    return [{"_path": f, "path_type": "hardlink"} for f in record.get("files") or () if isinstance(f, str)]


def _noarch_python_paths(record: dict[str, Any], entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """conda records a noarch: python package's paths_data as packaged (`site-packages/x`,
    `python-scripts/x`); its `files` say where they went (`lib/python3.11/site-packages/x`, `bin/x`). rattler
    records the latter."""
    files = [f for f in record.get("files") or () if isinstance(f, str)]
    site = next((f[: f.index("site-packages/") + 13] for f in files if "site-packages/" in f), None)
    if record.get("noarch") != "python" or site is None or site == "site-packages":
        return entries
    scripts = "Scripts" if any(f.startswith("Scripts/") for f in files) else "bin"
    moved = []
    for entry in entries:
        path = str(entry["_path"])
        if path.startswith("site-packages/"):
            entry = {**entry, "_path": site + path[len("site-packages") :]}
        elif path.startswith("python-scripts/"):
            entry = {**entry, "_path": scripts + path[len("python-scripts") :]}
        moved.append(entry)
    return moved


def _expected(package: str, entry: dict[str, Any]) -> _Expected | None:
    kind = str(entry.get("path_type") or "hardlink")
    if kind == "pyc_file":
        return None
    sha, size = entry.get("sha256_in_prefix"), entry.get("size_in_bytes")
    if not sha and not entry.get("prefix_placeholder"):
        sha = entry.get("sha256")
    if entry.get("prefix_placeholder") and entry.get("file_mode") != "binary":
        size = None  # text-mode placeholder replacement changes the length
    return (package, entry["_path"], kind, str(sha) if sha else None, int(size) if size is not None else None)


def _check(prefix: str, item: _Expected, hashes: bool) -> FileProblem | None:
    package, path, kind, sha256, _size = item
    full = os.path.join(prefix, path)
    if kind in EXISTENCE_ONLY:
        present = os.path.isdir(full) if kind == "directory" else os.path.lexists(full)
        if not present:
            return FileProblem(package, path, "missing", "not in the prefix")
        if os.path.islink(full) and not os.path.exists(full):
            # a softlinked environment whose package cache was cleaned (conda#16614): the link dangles
            return FileProblem(package, path, "missing", f"dangling symlink to {os.readlink(full)}")
        return None
    if not (hashes and sha256):
        try:
            st = os.stat(full)
        except OSError:
            return FileProblem(package, path, "missing", "not in the prefix")
        return _special_problem(item, st.st_mode) or _size_problem(item, st.st_size)
    return _content_problem(full, item, sha256)


def _special_problem(item: _Expected, mode: int) -> FileProblem | None:
    """A FIFO, socket, device or folder where the package installed a regular file (never read: a FIFO
    would block the check forever)."""
    kind = special_kind(mode)
    if kind is None:
        return None
    return FileProblem(item[0], item[1], "altered", f"is {kind}, not the file its package installed")


def _size_problem(item: _Expected, size: int) -> FileProblem | None:
    package, path, _kind, _sha, expected = item
    if expected is not None and size != expected:
        return FileProblem(package, path, "altered", f"size now {size} bytes, {expected} as installed")
    return None


def _content_problem(full: str, item: _Expected, sha256: str) -> FileProblem | None:
    """Size, then content, from one open file (one open + fstat instead of stat + open)."""
    package, path = item[0], item[1]
    try:
        fd = open_nonblocking(full)  # a FIFO in the file's place must not hang the open
    except OSError as exc:  # a socket cannot be opened at all
        try:
            st = os.stat(full)
        except OSError:
            return FileProblem(package, path, "missing", "not in the prefix")
        return (
            _special_problem(item, st.st_mode)
            or _size_problem(item, st.st_size)
            or FileProblem(package, path, "altered", f"unreadable ({exc.strerror})")
        )
    try:  # fstat before any file object: a folder opens, but os.fdopen refuses it (IsADirectoryError)
        info = os.fstat(fd)
        problem = _special_problem(item, info.st_mode) or _size_problem(item, info.st_size)
        if problem is not None:
            return problem
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as handle:
            actual = _digest(handle, info.st_size)
    except OSError as exc:
        return FileProblem(package, path, "altered", f"unreadable ({exc.strerror})")
    finally:
        os.close(fd)
    if actual != sha256:
        return FileProblem(
            package, path, "altered", f"sha256 now {actual[:12]}…, {sha256[:12]}… as installed"
        )
    return None


def _digest(handle: Any, size: int) -> str:
    """SHA-256 of an open file: one read when it is small (a short read of a regular file is its end)."""
    if size < SMALL:
        data = handle.read(size + 1)
        if len(data) <= size:
            return hashlib.sha256(data).hexdigest()
        digest = hashlib.sha256(data)  # it grew since fstat: read on
    else:
        digest = hashlib.sha256()
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    while count := handle.readinto(buffer):
        digest.update(view[:count])
    return digest.hexdigest()


def _check_batch(prefix: str, batch: list[_Expected], hashes: bool) -> list[FileProblem]:
    return [p for p in (_check(prefix, item, hashes) for item in batch) if p is not None]


@dataclass
class _Tally:
    packages: int = 0
    files: int = 0
    unverified: int = 0


def _batches(prefix: Path, packages: Iterable[str] | None, tally: _Tally) -> Iterator[list[_Expected]]:
    """The expected files of every (or every named) package, BATCH at a time, each record parsed once."""
    batch: list[_Expected] = []
    for item in _expected_files(prefix, set(packages) if packages is not None else None, tally):
        tally.files += 1
        if item[2] not in EXISTENCE_ONLY and item[3] is None and item[4] is None:
            tally.unverified += 1
        batch.append(item)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _expected_files(prefix: Path, wanted: set[str] | None, tally: _Tally) -> Iterator[_Expected]:
    """conda packages' files (conda-meta `paths_data`), then pip packages' (their dist-info RECORD); a folder
    with neither conda-meta nor site-packages is bad input (iter_records says so)."""
    if (prefix / "conda-meta").is_dir() or not site_packages_dirs(prefix):
        for _path, record in iter_records(prefix):
            if wanted is not None and record["name"] not in wanted:
                continue
            tally.packages += 1
            label = f"{record['name']}-{record['version']}-{record.get('build', '')}"
            yield from (item for entry in _entries(record) if (item := _expected(label, entry)) is not None)
    for label, entries in record_files(prefix, wanted):
        tally.packages += 1
        yield from ((label, path, "hardlink", sha256, size) for path, sha256, size in entries)


def workers() -> int:
    """Threads that check files: one per CPU (hashing is CPU work once the files are cached), at least 2 so
    one thread's disk wait overlaps another's hashing, at most 8."""
    return max(2, min(8, os.cpu_count() or 2))


def verify_files(
    prefix: Path, *, hashes: bool = True, packages: Iterable[str] | None = None
) -> IntegrityReport:
    """Check every file each package (or only `packages`, by name) installed into `prefix`.

    With `hashes=False` only existence and sizes are checked (fast); SHA-256 is computed on a few threads, in
    batches, with at most a few batches in flight.
    """
    root = str(prefix)
    tally = _Tally()
    found: list[FileProblem] = []
    count = workers()
    from concurrent.futures import ThreadPoolExecutor  # with logging: ~5 ms, for --files and doctor alone

    with ThreadPoolExecutor(max_workers=count) as pool:
        pending: deque[Future[list[FileProblem]]] = deque()
        for batch in _batches(prefix, packages, tally):
            pending.append(pool.submit(_check_batch, root, batch, hashes))
            while len(pending) > 2 * count:
                found.extend(pending.popleft().result())
        while pending:
            found.extend(pending.popleft().result())
    problems = tuple(sorted(found, key=lambda p: (p.package, p.path)))
    return IntegrityReport(root, tally.packages, tally.files, tally.unverified, problems)
