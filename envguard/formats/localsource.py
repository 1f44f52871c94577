"""The project itself in a lock: a pip package installed from a local folder (`pip install .`, `pip install -e
.`) is recorded relative to the lock's own folder, as uv.lock records `source = { editable = "." }`, so the
lock means the same checkout wherever it is cloned and tells no one where your files are.

In a conda-lock.yml the pip entry's `url` (and its envguard pip origin) is `file:` followed by the folder's
POSIX path relative to the lock's folder: `file:.` for the lock's own folder, `file:..` for its parent,
`file:sub/dir` below it. conda-lock's own reader takes any text there, and nothing in the entry is
machine-specific. Reading the lock turns it back into the folder's absolute `file:///...` URL (the form pip
records in direct_url.json), so everything downstream compares and installs absolute URLs only.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

SCHEME = "file:"


def is_relative(url: str) -> bool:
    """A recorded relative source: `file:` and a path that is not absolute (`file:` alone is the unrecorded
    local path, envguard.model.LOCAL_ORIGIN)."""
    return url.startswith(SCHEME) and len(url) > len(SCHEME) and not url.startswith(f"{SCHEME}/")


def folder_url(path: str) -> str:
    """A local folder's `file:///...` URL as pip writes it in direct_url.json (pip's path_to_url: absolute,
    normalised, percent-quoted)."""
    absolute = os.path.normpath(os.path.abspath(path))
    if os.name == "nt":  # drive letters and backslashes: the standard library's own rules, as pip uses them
        from urllib.parse import urljoin
        from urllib.request import pathname2url

        return urljoin(SCHEME, pathname2url(absolute))
    return f"{SCHEME}//{quote(absolute)}"


def relative(folder: str, base: str) -> str | None:
    """`file:REL` for `folder` seen from the lock's folder `base`, or None where there is no relative path (a
    folder on another Windows drive)."""
    try:
        rel = os.path.relpath(os.path.abspath(folder), os.path.abspath(base))
    except ValueError:
        return None
    return SCHEME + quote(rel.replace(os.sep, "/"))


def resolve(url: str, base: str) -> str:
    """A relative source read from a lock in the folder `base`, as the folder's absolute URL; any other URL
    unchanged."""
    if not is_relative(url):
        return url
    return folder_url(os.path.join(base, unquote(url[len(SCHEME) :])))


def local_path(url: str) -> Path | None:
    """The file or folder a `file:` URL points at, or None for other schemes."""
    if url.startswith("file:///"):
        return Path(unquote(url[len("file://") :]))
    if not url.startswith(SCHEME):
        return None
    return Path(unquote(urlsplit(url).path))
