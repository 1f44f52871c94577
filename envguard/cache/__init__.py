"""envguard's own caches, under one contract.

Every cache here only ever saves time: a miss, an unreadable or foreign entry, or an entry that cannot be
written costs a recomputation, never a wrong answer, and no cache holds an answer for drift.

Location: one folder, `$ENVGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/envguard`, else `~/.cache/envguard`; each
cache in a subfolder of its own (`entry(kind, name)`).
Permissions: every entry is written by `save` — atomically (temp file in the same folder, rename), mode 0600
in folders envguard creates 0700, never fsynced (a lost entry is a miss) — and no credential is ever written
(URLs are scrubbed, and a cache whose key would need one is not written at all).
The one invalidation rule: an entry is served only while everything its answer was computed from is
unchanged, as proved by a key taken BEFORE the computation — envguard's version and the entry's format, the
stat signature (size, mtime, ctime, inode) of every file the answer was read from, or the digest of their
bytes where the cache is content-addressed — and an answer read from a file changed within 2 s of the read
(`records.FRESH_NS`: a coarse file-system clock can give two edits one stamp) is not stored. A cache wraps a
reader: it is handed the reader and its inputs and returns what the reader returns, calling it on a miss; the
reader never knows the cache exists. Each cache says in its docstring which user flow it pays for and the
measurement that shows it (scripts/bench/bench_caches.py for the prefix caches).

- `statsig`: no entries; the key of `environments` and `checks`: every file the prefix reader reads.
- `records` (`records/`): each conda-meta record's Package and requested specs (a msgspec Struct); keyed by
  each record's stat signature.
- `environments` (`envs/`): a prefix's whole Environment; keyed by its stat fingerprint, platform and virtual
  packages; 16 entries at most.
- `checks` (`check/`): the verdict of the last clean full `envguard check` (and sync's in-sync answer) as
  printed; keyed by prefix, inputs, options, boot, driver and `CONDA_OVERRIDE_*`, and the inputs' and the
  prefix's stat signatures; drift is never stored.
- `parsed` (`parsed/`): a lock's or environment.yml's parse, keyed by the SHA-256 of its bytes, the platform
  and its name; a file holding a credential is never stored.
- `digests` (`digests/`): archive digests, keyed by each archive's stat signature; 20,000 files per folder.
- `packages` (`verified-pkgs/`): extracted package folders proved against their archive; keyed by the
  archive's digest, every file's stat signature and the boot (a restored CI cache is always proved again).
- `safe-paths-2` (`safe-paths-2/`): an empty file per archive sha256 whose paths.json installs nothing
  outside the environment or into conda-meta/ or etc/envguard/; content-addressed, so never invalidated.
- `virtual` (top level): this machine's virtual packages; keyed by boot, NVIDIA driver and `CONDA_OVERRIDE_*`.

`ENVGUARD_RECORD_CACHE=0` turns `records` and `environments` off. This package's own import is `os` alone:
the check fast path (`checks`, `statsig`) runs on it before anything else is loaded.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's own constant would cost an import on the fast path
if TYPE_CHECKING:
    from pathlib import Path

# What the detected virtual packages depend on besides the machine: the variables conda honours as overrides.
# Both the virtual-package cache and the check fast path key on them.
OVERRIDE_VARS = (
    "CONDA_OVERRIDE_CUDA",
    "CONDA_OVERRIDE_GLIBC",
    "CONDA_OVERRIDE_OSX",
    "CONDA_OVERRIDE_ARCHSPEC",
    "CONDA_OVERRIDE_LINUX",
    "CONDA_OVERRIDE_WIN",
)
BOOT_ID = "/proc/sys/kernel/random/boot_id"
DRIVER_VERSION = "/proc/driver/nvidia/version"


def cache_path() -> str:
    """envguard's cache folder as text: `$ENVGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/envguard`, else
    ~/.cache/envguard (os only: the check fast path calls it)."""
    explicit = os.environ.get("ENVGUARD_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "envguard")


def cache_dir() -> Path:
    """envguard's cache folder (see cache_path)."""
    from pathlib import Path  # pathlib is not loaded on the fast path

    return Path(cache_path())


def entry(kind: str, name: str) -> str:
    """The path of one entry: `<cache folder>/<kind>/<name>`."""
    return os.path.join(cache_path(), kind, name)


def enabled() -> bool:
    """The record and environment caches are on unless `ENVGUARD_RECORD_CACHE=0`."""
    return os.environ.get("ENVGUARD_RECORD_CACHE", "1") != "0"


def boot_id() -> str:
    """This boot's random id ('' where the kernel gives none: then nothing boot-bound is remembered)."""
    try:
        with open(BOOT_ID, encoding="ascii") as handle:
            return handle.read().strip()
    except (OSError, ValueError):
        return ""


def save(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write one entry as the contract says (atomic, 0600, not fsynced; text has every URL's credentials
    scrubbed, bytes are written as given); a cache that cannot be written only costs speed next time, so
    every failure is swallowed."""
    # the writer imports re and pathlib, which the fast path (a lookup, never a save) does without
    from envguard.atomic import write_bytes, write_text
    from envguard.errors import EnvguardError

    try:
        if isinstance(data, str):
            write_text(path, data, durable=False, private=True)
        else:
            write_bytes(path, data, durable=False, private=True)
    except (EnvguardError, OSError):
        return
