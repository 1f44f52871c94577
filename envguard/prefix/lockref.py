"""Which lock an environment follows, recorded inside the environment itself.

envguard writes it when it ties an environment to a lock — `envguard lock PREFIX -o FILE`, `create --lock
FILE`, `sync --lock FILE` — so that what runs later without being told the lock (the conda plugin health check
and post-command hook, a notebook's `%envguard check`) checks against the right one. The record is
`<prefix>/etc/envguard/lock.json`: outside conda-meta (conda never reads it as a package record) and the same
place in a conda prefix and a venv. It holds the lock's absolute path and the SHA-256 of its bytes when it was
recorded, so a lock edited since is told apart from the one the environment was made from.
"""

from __future__ import annotations

import hashlib
import json
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

    def current(self) -> bool:
        """Whether the lock file still holds the bytes it held when it was recorded."""
        try:
            return hashlib.sha256(read_bytes(self.lock)).hexdigest() == self.sha256
        except OSError:
            return False


def remember(prefix: Path, lock: Path) -> bool:
    """Record that `prefix` follows `lock` (best effort: a read-only environment keeps no record, and says
    so by returning False)."""
    try:
        digest = hashlib.sha256(read_bytes(lock)).hexdigest()
        document = {"format": FORMAT, "lock": str(lock.resolve()), "sha256": digest, "by": __version__}
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
    lock, digest = data.get("lock"), data.get("sha256")
    if not isinstance(lock, str) or not isinstance(digest, str):
        return None
    return LockRef(Path(lock), digest)
