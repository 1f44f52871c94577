"""SOURCE, resolved once: a live environment (a prefix folder, `name:ENV`, or the active environment) or a
file of any supported kind, as a `Source` value that commands pass down instead of re-deriving it from the
text.

Resolving `name:ENV` reads every condarc, and sniffing a file's kind reads its head: both happen once, here.
Without SOURCE, the environment meant is the project's `[tool.envguard] environment`, else `$VIRTUAL_ENV`
when a venv is activated (even inside a conda environment), else `$CONDA_PREFIX`
(envguard.config.active_prefix); with none of them, bad input saying so, never the prefix envguard itself
runs from (a pipx venv would check itself, and its fix line would uninstall envguard).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from envguard.cache import parsed as parsecache
from envguard.config import active_prefix
from envguard.errors import BadInputError
from envguard.formats import detect_kind, read_file
from envguard.machine import virtual as virtual_mod
from envguard.model import Environment, SourceKind, VirtualPackage
from envguard.prefix.reader import read_prefix
from envguard.textio import read_bytes, read_input

ALLOW_SELF = "ENVGUARD_ALLOW_SELF"  # =1: the explicit yes to changing the environment envguard runs from
NO_ENVIRONMENT = (
    "no environment given and none active (no $VIRTUAL_ENV or $CONDA_PREFIX): pass its folder or name:ENV "
    'as SOURCE, activate it, or set environment = "PATH" under [tool.envguard] in the project\'s '
    "pyproject.toml"
)


@dataclass(frozen=True)
class Source:
    """What SOURCE names: `path` is the prefix folder (`live`) or the file; `kind` the file's detected
    kind."""

    text: str | None
    path: Path
    live: bool
    kind: SourceKind | None = None

    @property
    def label(self) -> str:
        return self.text or str(self.path)


def resolve(text: str | None) -> Source:
    """SOURCE text -> Source: None is the active environment; `name:ENV` a named conda environment; a folder a
    prefix; a file is sniffed for its kind. Anything else is bad input naming what was given."""
    if text is None:
        meant = active_prefix()
        if meant is None:
            raise BadInputError(NO_ENVIRONMENT)
        if meant.startswith("name:"):
            return resolve(meant)
        return Source(None, Path(meant), True)
    if text.startswith("name:"):
        from envguard.prefix.condaconfig import find_named  # every condarc's parser: for name:ENV alone

        return Source(text, find_named(text[len("name:") :]), True)
    path = Path(text).expanduser()
    try:
        path.stat()
    except FileNotFoundError:
        raise BadInputError(
            f"{text}: no such file or environment; give a prefix folder, name:ENV or a file"
        ) from None
    except OSError as exc:  # a name too long for the file system, a loop of links, no permission
        raise BadInputError(f"{text}: {exc.strerror}; give a prefix folder, name:ENV or a file") from None
    if path.is_file():
        return Source(text, path, False, detect_kind(path))
    if not path.is_dir():
        read_input(path, 0)  # a FIFO, socket or device: bad input naming it, never a hang
    return Source(text, path, True)


def resolve_prefix(text: str | None) -> Path:
    """The prefix SOURCE names, for commands that need a live environment (a file is refused by the
    caller)."""
    if text is not None and not text.startswith("name:"):
        return Path(text).expanduser()
    return resolve(text).path


def load(
    source: Source | str | None,
    *,
    platform: str | None = None,
    probe: bool = False,
    detect_virtual: bool = True,
) -> Environment:
    """Read SOURCE into an Environment; live environments get virtual packages and optionally fingerprints."""
    resolved = source if isinstance(source, Source) else resolve(source)
    if not resolved.live:
        return _read_file(resolved, platform)
    return read_live(resolved.path, probe=probe, detect_virtual=detect_virtual)


def _read_file(source: Source, platform: str | None) -> Environment:
    """A file's environment; a conda-lock.yml is parsed once per exact content (envguard.cache.parsed, keyed
    by its folder as `check` keys it: a project it records relative to itself is that folder's): diff and
    export of a 100,000-package lock read the remembered parse in ~1.5 s instead of parsing it in ~4 s, and
    `diff L L` parses it once."""
    path = source.path

    def parse() -> Environment:
        return read_file(path, platform=platform, kind=source.kind)

    if source.kind != "conda-lock":
        return parse()
    try:
        data = read_bytes(path)
    except OSError:
        return parse()  # the reader's own line names what is wrong with the file
    key = f"source\0{platform}\0{os.path.dirname(os.path.abspath(path))}"
    return parsecache.parsed(data, key, str(path), parse)


def read_live(prefix: Path, *, probe: bool = False, detect_virtual: bool = True) -> Environment:
    """Snapshot a live prefix; with `probe`, run the fingerprint probe in its own interpreter."""
    virtual: tuple[VirtualPackage, ...] = ()
    if detect_virtual:
        virtual = virtual_mod.detect()
    env = read_prefix(prefix, virtual)
    if probe:
        from envguard.prefix.probe import run_probe  # subprocess and signals: where the probe runs

        env = dataclasses.replace(env, fingerprints=run_probe(prefix))
    return env


def envguard_inside(prefix: Path) -> str | None:
    """What of the running envguard changing (or removing) `prefix` would change or remove: the prefix its
    interpreter runs from, the base interpreter a venv of it is made from, or the folder its own code lives
    in, when `prefix` is that folder or holds it; None when `prefix` is none of envguard's."""
    try:
        target = prefix.expanduser().resolve()
    except OSError:
        return None
    own = (
        ("envguard's own environment", sys.prefix),
        ("the interpreter envguard runs on", sys.base_prefix),
        ("envguard's own code", str(Path(__file__).resolve().parent.parent)),
    )
    for what, folder in own:
        path = Path(folder).resolve()
        if path == target or target in path.parents:
            return f"{what} ({path})"
    return None
