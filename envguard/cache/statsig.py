"""A prefix's stat fingerprint: the metadata of every file envguard's prefix reader reads, as text.

It covers `conda-meta/` (every entry's name, size, mtime, ctime, inode: the records and the history), a
venv's `pyvenv.cfg` and the interpreter it names (`python -m venv --upgrade` changes them) and, in each
site-packages folder, every `*.dist-info`/`*.egg-info` folder (its own mtime and ctime change when a file in
it is added, removed or renamed) with the files the pip reader reads in a dist-info (METADATA, INSTALLER,
direct_url.json), plus `*.pth` and `*.egg-link` files. Symlinks are followed (the target's metadata counts,
and the link's own). Any install, removal, upgrade, reinstall or edit of those changes it (ctime cannot be
set back by a user). Where the filesystem does not report a field it relies on (an inode or ctime of 0),
there is no fingerprint (""), and nothing may be served on its strength.

Two caches trust it: the check's verdict cache (envguard.cache.checks) and the whole-environment cache
(envguard.cache.environments). Standard library only (os, stat): the check fast path runs it before anything
else is imported.
"""

from __future__ import annotations

import os
import stat

_PIP_SUFFIXES = (".dist-info", ".egg-info", ".pth", ".egg-link")
# What envguard.prefix.pip_dist reads inside a dist-info (its READ_FILES; it reads nothing in an egg-info).
READ_FILES = ("INSTALLER", "METADATA", "direct_url.json")
UNRELIABLE = "unreliable-stat"


def stat_fingerprint(prefix: str | os.PathLike[str]) -> str:
    """The stat metadata of conda-meta/ and of the pip metadata in each site-packages folder, as text; its
    last line is the newest mtime or ctime in it (see `newest`)."""
    root = os.fspath(prefix)
    walk = _Walk()
    walk.scan(os.path.join(root, "conda-meta"), descend=False)
    walk.interpreter(root)
    for site in _site_packages(root):
        walk.lines.append(f"site {site}")
        walk.scan(site, descend=True)
    if walk.unreliable:
        return ""
    walk.lines.append(f"newest {walk.newest}")
    return "\n".join(walk.lines)


def newest(fingerprint: str) -> int:
    """The newest mtime or ctime (ns) a fingerprint holds: a cache stores nothing under a fingerprint whose
    files changed a moment ago (a coarse file-system clock can give two edits the same stamp)."""
    last = fingerprint.rpartition("\n")[2]
    return int(last[len("newest ") :]) if last.startswith("newest ") else 0


class _Walk:
    __slots__ = ("lines", "newest", "unreliable")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.newest = 0
        self.unreliable = False

    def interpreter(self, root: str) -> None:
        """pyvenv.cfg, the interpreter its `home`/`executable` names and the prefix's own bin/python."""
        cfg = os.path.join(root, "pyvenv.cfg")
        self.lines.append(self.path_line("pyvenv.cfg", cfg))
        try:
            with open(cfg, "rb") as handle:  # a venv's pyvenv.cfg is a few hundred bytes
                text = handle.read(65536).decode("utf-8", "replace")
        except OSError:
            text = ""
        for raw in text.splitlines():
            key, _, value = raw.partition("=")
            key, value = key.strip(), value.strip()
            if key == "executable" and value:
                self.lines.append(self.path_line("executable", value))
            elif key == "home" and value:
                for name in ("python3", "python"):
                    self.lines.append(self.path_line(f"home {name}", os.path.join(value, name)))
        for name in ("bin/python", "bin/python3", "python.exe"):
            self.lines.append(self.path_line(name, os.path.join(root, name)))

    def scan(self, folder: str, *, descend: bool) -> None:
        fd = _open_dir(folder)
        try:
            with os.scandir(folder if fd is None else fd) as entries:
                if descend:
                    items = sorted((e for e in entries if e.name.endswith(_PIP_SUFFIXES)), key=_name)
                else:
                    items = sorted(entries, key=_name)
            self._entries(folder, items, descend)
        except OSError:
            self.lines.append(f"missing {folder}")
        finally:
            if fd is not None:
                os.close(fd)

    def _entries(self, folder: str, items: list[os.DirEntry[str]], descend: bool) -> None:
        # the loop of a 3,000-record conda-meta: plain entries inline, no method calls
        append, base = self.lines.append, folder + os.sep
        for entry in items:
            name = entry.name
            path = base + name
            if entry.is_symlink():  # the link's own fields, its target's path and fields
                append(self.path_line(name, path))
            else:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    append(f"{name} gone")
                    continue
                mtime, ctime, ino = st.st_mtime_ns, st.st_ctime_ns, st.st_ino
                if not ino or not ctime:
                    self.unreliable = True
                    return
                if mtime > self.newest or ctime > self.newest:
                    self.newest = max(mtime, ctime)
                append(f"{name} {st.st_size} {mtime} {ctime} {ino}")
            if descend and name.endswith(".dist-info") and _is_dir(entry):
                # The folder's own mtime/ctime (above) changes whenever a file in it is added, removed or
                # renamed; an in-place edit changes only that file, so the files the pip reader reads are
                # signed too.
                inside = path + os.sep  # os.path.join per file costs more than its lstat
                for read in READ_FILES:
                    append(self.path_line(f"  {read}", inside + read))

    def path_line(self, name: str, path: str) -> str:
        try:
            own = os.lstat(path)
        except OSError:
            return f"{name} absent"
        line = f"{name} {self.fields(own)}"
        if stat.S_ISLNK(own.st_mode):
            try:
                target = os.stat(path)
            except OSError:
                return line + " -> dangling"
            line += f" -> {os.path.realpath(path)} {self.fields(target)}"
        return line

    def fields(self, st: os.stat_result) -> str:
        mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
        if not st.st_ino or not ctime:
            self.unreliable = True
            return UNRELIABLE
        if ctime > self.newest or mtime > self.newest:
            self.newest = max(ctime, mtime)
        return f"{st.st_size} {mtime} {ctime} {st.st_ino}"


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _open_dir(folder: str) -> int | None:
    """A descriptor of FOLDER to scan it through (its entries are then statted relative to it, fstatat, not
    by full paths the kernel resolves again), or None where scandir takes no descriptor or it cannot be
    opened (then the folder is scanned by path, and a missing one reported as such)."""
    if os.scandir not in os.supports_fd:
        return None
    try:
        return os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)  # a symlinked dist-info folder is scanned too
    except OSError:
        return False


def _site_packages(root: str) -> list[str]:
    lib = os.path.join(root, "lib")
    try:
        names = sorted(n for n in os.listdir(lib) if n.startswith("python"))
    except OSError:
        names = []
    found = [os.path.join(lib, n, "site-packages") for n in names]
    found.append(os.path.join(root, "Lib", "site-packages"))
    return [f for f in found if os.path.isdir(f)]
