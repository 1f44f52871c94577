"""Missing and altered files of a conda prefix, checked against each package's conda-meta `paths_data`.

Unlike `conda doctor` (which compares `sha256_in_prefix` only, so it misses edits in rattler- or pixi-made
environments), this compares `sha256_in_prefix` when the installer wrote it and the package's own `sha256` and
`size_in_bytes` otherwise. Files whose content cannot be verified (rewritten at install time for a prefix
placeholder without `sha256_in_prefix`, or listed by an old record without `paths_data`) are checked for
existence and counted as unverified. Compiled `.pyc` files are skipped: Python regenerates them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from envguard.prefix.records import iter_records

Problem = Literal["missing", "altered"]
CHUNK = 1 << 20
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


@dataclass(frozen=True, slots=True)
class _Expected:
    package: str
    path: str
    kind: str
    sha256: str | None
    size: int | None


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
    return _Expected(
        package, entry["_path"], kind, str(sha) if sha else None, int(size) if size is not None else None
    )


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _check(prefix: str, item: _Expected, hashes: bool) -> FileProblem | None:
    full = os.path.join(prefix, item.path)
    if item.kind in EXISTENCE_ONLY:
        present = os.path.isdir(full) if item.kind == "directory" else os.path.lexists(full)
        if not present:
            return FileProblem(item.package, item.path, "missing", "not in the prefix")
        if os.path.islink(full) and not os.path.exists(full):
            # a softlinked environment whose package cache was cleaned (conda#16614): the link dangles
            return FileProblem(item.package, item.path, "missing", f"dangling symlink to {os.readlink(full)}")
        return None
    try:
        size = os.stat(full).st_size
    except OSError:
        return FileProblem(item.package, item.path, "missing", "not in the prefix")
    if item.size is not None and size != item.size:
        return FileProblem(item.package, item.path, "altered", f"size {size} bytes, installed {item.size}")
    if hashes and item.sha256:
        try:
            actual = _sha256(full)
        except OSError as exc:
            return FileProblem(item.package, item.path, "altered", f"unreadable ({exc.strerror})")
        if actual != item.sha256:
            return FileProblem(
                item.package, item.path, "altered", f"sha256 {actual[:12]}…, installed {item.sha256[:12]}…"
            )
    return None


def _expectations(prefix: Path, packages: Iterable[str] | None) -> Iterator[tuple[str, list[_Expected], int]]:
    wanted = set(packages) if packages is not None else None
    for _path, record in iter_records(prefix):
        if wanted is not None and record["name"] not in wanted:
            continue
        label = f"{record['name']}-{record['version']}-{record.get('build', '')}"
        expected = [e for e in (_expected(label, entry) for entry in _entries(record)) if e is not None]
        unverified = sum(
            1 for e in expected if e.kind not in EXISTENCE_ONLY and e.sha256 is None and e.size is None
        )
        yield label, expected, unverified


def verify_files(
    prefix: Path, *, hashes: bool = True, packages: Iterable[str] | None = None
) -> IntegrityReport:
    """Check every file each package (or only `packages`, by name) installed into `prefix`.

    With `hashes=False` only existence and sizes are checked (fast); SHA-256 is computed in a thread pool.
    """
    items: list[_Expected] = []
    count = unverified = 0
    for _label, expected, not_checkable in _expectations(prefix, packages):
        count += 1
        unverified += not_checkable
        items.extend(expected)
    root = str(prefix)
    with ThreadPoolExecutor(max_workers=min(8, (os.cpu_count() or 2) * 2)) as pool:
        found = list(pool.map(lambda item: _check(root, item, hashes), items))
    problems = tuple(sorted((p for p in found if p is not None), key=lambda p: (p.package, p.path)))
    return IntegrityReport(
        prefix=root, packages=count, files=len(items), unverified=unverified, problems=problems
    )
