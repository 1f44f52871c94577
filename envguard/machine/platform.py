"""This machine's conda platform, and the virtual packages a target platform offers (pure, no rattler)."""

from __future__ import annotations

import os
import sys

from envguard.model import VirtualPackage


def current_platform() -> str:
    """The conda subdir of this machine (`linux-64`, `osx-arm64`, `win-64`...), without importing rattler."""
    if hasattr(os, "uname"):
        machine = os.uname().machine.lower()
    else:  # Windows
        import platform as _platform

        machine = _platform.machine().lower()
    system = sys.platform
    arch = {"x86_64": "64", "amd64": "64", "aarch64": "aarch64", "arm64": "arm64", "ppc64le": "ppc64le"}.get(
        machine, machine
    )
    if system.startswith("linux"):
        return f"linux-{arch}"
    if system == "darwin":
        return "osx-arm64" if arch in ("arm64", "aarch64") else "osx-64"
    if system == "win32":
        return "win-arm64" if arch in ("arm64", "aarch64") else "win-64"
    return f"{system}-{arch}"


def default_virtual_packages(platform: str, cuda: str | None) -> tuple[VirtualPackage, ...]:
    """The virtual packages a target platform offers; `__cuda` only when a CUDA version is given."""
    system = platform.split("-", 1)[0]
    found: list[VirtualPackage] = []
    if system in ("linux", "osx"):
        found.append(VirtualPackage("__unix", "0"))
    if system == "linux":
        found += [VirtualPackage("__linux", "5.10"), VirtualPackage("__glibc", "2.28")]
    elif system == "osx":
        found.append(VirtualPackage("__osx", "13.0"))
    elif system == "win":
        found.append(VirtualPackage("__win", "0"))
    if platform.endswith("-64") and system != "win":
        found.append(VirtualPackage("__archspec", "1", "x86_64"))
    elif platform.endswith(("arm64", "aarch64")):
        found.append(VirtualPackage("__archspec", "1", "aarch64" if system == "linux" else "arm64"))
    if cuda:
        found.append(VirtualPackage("__cuda", cuda))
    return tuple(found)
