"""File digests, read in chunks (hashlib releases the GIL while hashing, so threads hash files in
parallel), and a memo of the digests of unchanged archives (DigestMemo)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import zlib

from envguard.cache import entry, save

CHUNK = 1 << 20


def file_digest(path: str | os.PathLike[str], algorithm: str = "sha256") -> str:
    """Hex digest of a file's bytes."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class DigestMemo:
    """Archive digests already taken, kept per folder in envguard's cache and keyed by each file's stat
    signature (size, mtime, ctime, inode, device): rewriting, replacing or touching a file gives it a new
    ctime, which no user can set back, so a remembered digest is only ever served for the very bytes that
    were hashed. A file changed within `FRESH_NS` of being hashed is not remembered (a coarse file-system
    clock can give two writes the same stamp), nor is one whose signature changed while it was hashed or
    whose file system reports no inode or ctime. A folder's memo holds at most `MAX_ENTRIES` files: beyond
    that, `save()` keeps only those this run used (archives deleted since leave no trace for ever).
    Thread-safe; `save()` writes what was learnt (best effort)."""

    FORMAT = 1
    FRESH_NS = 2_000_000_000
    MAX_ENTRIES = 20_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folders: dict[str, dict[str, list[object]]] = {}
        self._changed: set[str] = set()
        self._used: set[tuple[str, str]] = set()

    def digest(self, path: str | os.PathLike[str], algorithm: str = "sha256") -> str:
        """`file_digest(path, algorithm)`, from the memo while the file is unchanged."""
        folder, name, before, remembered = self._lookup(path, algorithm)
        if remembered is not None:
            return remembered
        value = file_digest(path, algorithm)
        if before and _signature(path) == before and time.time_ns() - max(before[1:3]) > self.FRESH_NS:
            entries = self._entries(folder)  # takes the lock itself
            with self._lock:
                entries[name] = [before, algorithm, value]
                self._changed.add(folder)
        return value

    def known(self, path: str | os.PathLike[str], algorithm: str = "sha256") -> str | None:
        """The remembered digest of an unchanged file (a stat and a lookup, nothing read), else None."""
        return self._lookup(path, algorithm)[3]

    def _lookup(self, path: str | os.PathLike[str], algorithm: str) -> tuple[str, str, list[int], str | None]:
        """(folder, name, the file's stat signature taken now, its remembered digest or None)."""
        folder, name = os.path.split(os.path.abspath(path))  # signed by os.stat: a re-pointed link misses
        before = _signature(path)
        known = self._entries(folder).get(name)
        with self._lock:
            self._used.add((folder, name))
        if before and isinstance(known, list) and len(known) == 3 and known[:2] == [before, algorithm]:
            return folder, name, before, str(known[2])
        return folder, name, before, None

    def save(self) -> None:
        for folder in sorted(self._changed):
            files = self._folders[folder]
            if len(files) > self.MAX_ENTRIES:
                files = {name: item for name, item in files.items() if (folder, name) in self._used}
            document = {"header": [self.FORMAT, folder], "files": files}
            save(_memo_path(folder), json.dumps(document).encode())  # not written: a hash next time
        self._changed.clear()

    def _entries(self, folder: str) -> dict[str, list[object]]:
        with self._lock:
            entries = self._folders.get(folder)
            if entries is None:
                entries = self._folders[folder] = _load_memo(folder, [self.FORMAT, folder])
            return entries


def _signature(path: str | os.PathLike[str]) -> list[int]:
    """[size, mtime, ctime, inode, device], or [] where the file system leaves one of them unreliable."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    if not st.st_ino or not st.st_ctime_ns:
        return []
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _memo_path(folder: str) -> str:
    return entry("digests", f"{zlib.crc32(folder.encode('utf-8', 'surrogateescape')):08x}.json")


def _load_memo(folder: str, header: list[object]) -> dict[str, list[object]]:
    try:
        with open(_memo_path(folder), "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("header") != header or not isinstance(data.get("files"), dict):
        return {}
    return data["files"]  # type: ignore[no-any-return]
