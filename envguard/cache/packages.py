"""Extracted package folders proved against their archive (envguard.engine.cachecheck does the proving): each
folder with the stat signature of every file it links and of its own info/paths.json, for that archive's
digest, valid only for the machine's current boot (see envguard.cache for the contract). While every signature
is unchanged the folder is not hashed again. ctime cannot be part of it: rattler hard-links these very files
into each environment, and every link or unlink changes their ctime. A replaced or rewritten file gets another
inode or mtime; a cache restored on a CI runner (a new boot) is always proved in full, so a poisoned CI cache
cannot bring a forged memo along. Files changed within the last 2 s are not remembered (a coarse clock could
give a second edit the same signature)."""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path
from typing import Any

from envguard.cache import boot_id, entry, save
from envguard.version import __version__

Signed = list[list[Any]]  # [relative path, size, mtime_ns, inode, device] per file
Proof = list[str]  # what a memo is valid for: the archive's digest algorithm, digest and file name


def signature(relative: str, path: Path) -> list[Any]:
    """One file's entry in a folder's signature."""
    st = os.stat(path)
    return [relative, st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]


class ProvedFolders:
    """The folders of one package cache (pkgs_dir) proved against an archive digest, with their files'
    signatures."""

    FORMAT = 1
    FRESH_NS = 2_000_000_000

    def __init__(self, pkgs_dir: Path) -> None:
        real = os.path.realpath(pkgs_dir)
        self._where = entry("verified-pkgs", f"{zlib.crc32(real.encode('utf-8', 'replace')):08x}.json")
        self._header = [self.FORMAT, __version__, real, boot_id()]
        self._entries: dict[str, list[Any]] = {}
        self._changed = False
        try:
            with open(self._where, "rb") as handle:
                data = json.loads(handle.read())
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("header") == self._header:
            entries = data.get("folders")
            if isinstance(entries, dict):
                self._entries = entries

    def holds(self, folder: Path, proof: Proof) -> bool:
        """Whether `folder` was proved against this very archive and not a file of it changed since."""
        item = self._entries.get(folder.name)
        if not (isinstance(item, list) and len(item) == 2 and item[0] == proof):
            return False
        signed = item[1]
        if not isinstance(signed, list) or not signed:
            return False
        base = os.path.join(folder, "")  # plain strings: thousands of files, pathlib would double the cost
        stat = os.stat
        try:
            for line in signed:
                st = stat(base + line[0])
                if [line[0], st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev] != line:  # signature()
                    return False
        except (OSError, TypeError, IndexError, ValueError):
            return False
        return True

    def remember(self, folder: Path, proof: Proof, signed: Signed) -> None:
        now = time.time_ns()
        if not self._header[3] or any(now - line[2] <= self.FRESH_NS for line in signed):
            return
        self._entries[folder.name] = [proof, signed]
        self._changed = True

    def save(self) -> None:
        if self._changed:
            save(self._where, json.dumps({"header": self._header, "folders": self._entries}).encode("utf-8"))
