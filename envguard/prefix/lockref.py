"""Which lock an environment follows, recorded inside the environment itself.

envguard writes it when it ties an environment to a lock — `envguard lock PREFIX -o FILE`, `create --lock
FILE`, `sync --lock FILE` — so that what runs later without being told the lock (the conda plugin health check
and post-command hook, a notebook's `%envguard check`) checks against the right one. The record is
`<prefix>/etc/envguard/lock.json`: outside conda-meta (conda never reads it as a package record) and the same
place in a conda prefix and a venv. It holds the lock's absolute path and the SHA-256 of its bytes when it was
recorded, so a lock edited since is told apart from the one the environment was made from, and the lock's stat
then (size, mtime, ctime, inode): a lock untouched since is current without reading it, so what asks after
every `conda install` (the plugin's hook) costs the same whatever the lock's size.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from envguard.atomic import write_text
from envguard.errors import EnvguardError
from envguard.textio import read_bytes
from envguard.version import __version__

RECORD = Path("etc") / "envguard" / "lock.json"
FORMAT = 1


@dataclass(frozen=True, slots=True)
class LockRef:
    """The lock an environment was last tied to, and the digest of its bytes then."""

    lock: Path
    sha256: str
    stat: str = ""  # the lock's `signature` when it was recorded ("" where it was not taken)

    def current(self) -> bool:
        """Whether the lock file still holds the bytes it held when it was recorded (its stat unchanged
        since: yes, without reading it)."""
        if self.stat and signature(self.lock) == self.stat:
            return True
        try:
            return hashlib.sha256(read_bytes(self.lock)).hexdigest() == self.sha256
        except OSError:
            return False


def signature(path: Path) -> str:
    """Size, mtime, ctime, inode and device of `path` (ctime cannot be set back by a user: any write changes
    it); "" where it cannot be read or the file system does not report them."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    if not (st.st_ino and st.st_ctime_ns):
        return ""
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"


def remember(prefix: Path, lock: Path) -> bool:
    """Record that `prefix` follows `lock` (best effort: a read-only environment keeps no record, and says
    so by returning False)."""
    try:
        before = signature(lock)
        digest = hashlib.sha256(read_bytes(lock)).hexdigest()
        stat = before if signature(lock) == before else ""  # written meanwhile: no shortcut
        document = {"format": FORMAT, "lock": str(lock.resolve()), "sha256": digest, "by": __version__}
        if stat:
            document["stat"] = stat
        write_text(prefix / RECORD, json.dumps(document, indent=1) + "\n", durable=False)
    except (OSError, EnvguardError):
        return False
    return True


def recall(prefix: Path) -> LockRef | None:
    """The lock `prefix` was last tied to, or None (no record, or one envguard cannot read)."""
    try:
        data = json.loads(read_bytes(prefix / RECORD))
    except (OSError, ValueError, RecursionError):  # deep nesting: json's C scanner recurses
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    lock, digest, stat = data.get("lock"), data.get("sha256"), data.get("stat", "")
    if not isinstance(lock, str) or not isinstance(digest, str):
        return None
    return LockRef(Path(lock), digest, stat if isinstance(stat, str) else "")
