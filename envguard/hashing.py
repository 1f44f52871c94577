"""File digests, read in chunks (hashlib releases the GIL while hashing, so threads hash files in
parallel)."""

from __future__ import annotations

import hashlib
import os

CHUNK = 1 << 20


def file_digest(path: str | os.PathLike[str], algorithm: str = "sha256") -> str:
    """Hex digest of a file's bytes."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
