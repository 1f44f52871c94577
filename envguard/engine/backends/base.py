"""The one small interface every backend implements: solve, install into a prefix, remove, list.

A `Request` says what to build: specs to solve (with channels, platform and the virtual packages to solve
for), or an exact locked package list (`locked`) to install without solving. Backends never print; they return
packages or raise BackendError (exit 3) with a one-line message naming the tool.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from envguard.channels import scrub
from envguard.engine.install import Alongside
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
    def remove(self, prefix: Path) -> None:
        """Delete the environment at `prefix`."""

    @abstractmethod
    def list(self, prefix: Path) -> tuple[Package, ...]:
        """The conda packages installed in `prefix`."""


def redact(text: str) -> str:
    """`text` with credentials removed from every URL in it (tool output is quoted in error messages)."""
    return scrub(text)
