"""The one small interface every backend implements: solve, install into a prefix, change a prefix in place,
remove, list.

A `Request` says what to build: specs to solve (with channels, platform and the virtual packages to solve
for), or an exact locked package list (`locked`) to install without solving. A `Change` is a transaction on an
existing prefix (`envguard sync`): packages to link and to unlink, their archives already proved against the
lock. Backends never print; they return packages or raise BackendError (exit 3) with a one-line message naming
the tool.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from envguard.channels import scrub
from envguard.engine.install import Alongside, Fetched
from envguard.model import Package, VirtualPackage


@dataclass(frozen=True)
class Request:
    """What to put into a prefix. `specs` are conda MatchSpec strings; `locked` (when given) is installed as
    is."""

    specs: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    platform: str = ""
    virtual_packages: tuple[VirtualPackage, ...] = ()
    locked: tuple[Package, ...] = ()
    origin: str = ""


@dataclass(frozen=True)
class Plan:
    """What a backend chose (a dry run) or installed: packages for one platform; `native` is the backend's own
    data (rattler records) reused by `install` to avoid a second solve."""

    platform: str
    packages: tuple[Package, ...]
    native: tuple[object, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Change:
    """Make a prefix's conda packages what a lock says, touching only what differs: link `link` (missing,
    changed, or `reinstall`ed: names whose installed record may be the same archive, linked again), unlink
    `unlink`; every archive of `link` proved in `fetched`. `specs` and `removed_specs` are the requested specs
    conda-meta/history records, as conda records them."""

    link: tuple[Package, ...] = ()
    unlink: tuple[Package, ...] = ()
    reinstall: frozenset[str] = frozenset()
    specs: tuple[str, ...] = ()
    removed_specs: tuple[str, ...] = ()
    platform: str = ""
    fetched: Fetched | None = field(default=None, compare=False, repr=False)


class Backend(ABC):
    """conda / mamba / micromamba through their CLI, or the embedded rattler engine."""

    name: str = ""

    def describe(self) -> str:
        """The backend and its version, for reports (`conda 26.7.1`, `embedded (py-rattler 0.28.0)`)."""
        return self.name

    @abstractmethod
    def solve(self, request: Request) -> Plan:
        """The packages `request` resolves to, without touching any prefix."""

    @abstractmethod
    def install(
        self, prefix: Path, request: Request, plan: Plan | None = None, *, alongside: Alongside = None
    ) -> Plan:
        """Create `prefix` with what `request` asks (reusing `plan` when the backend can). `alongside` is
        called once, when the engine itself starts (the tool's process, or rattler's link, which needs no
        GIL): work for other threads to do meanwhile, instead of competing with this thread's Python."""

    @abstractmethod
    def update(self, prefix: Path, change: Change) -> list[str]:
        """Apply `change` to the existing environment at `prefix` (only the packages it names are linked or
        unlinked); returns warnings. conda-meta/history records the change as conda records it."""

    @abstractmethod
    def remove(self, prefix: Path) -> None:
        """Delete the environment at `prefix`."""

    @abstractmethod
    def list(self, prefix: Path) -> tuple[Package, ...]:
        """The conda packages installed in `prefix`."""


def redact(text: str) -> str:
    """`text` with credentials removed from every URL in it (tool output is quoted in error messages)."""
    return scrub(text)
