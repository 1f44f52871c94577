"""A pip package's dependencies as its `Requires-Dist` names them, with each marker evaluated for the
environment the package is installed in (its interpreter and platform, not envguard's own) (pure)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from envguard.model import Environment

# conda's platform -> (sys_platform, platform_system, os_name, platform_machine)
_PLATFORMS = {
    "linux": ("linux", "Linux", "posix"),
    "osx": ("darwin", "Darwin", "posix"),
    "win": ("win32", "Windows", "nt"),
}
_MACHINES = {
    "64": "x86_64",
    "32": "i686",
    "aarch64": "aarch64",
    "arm64": "arm64",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
    "armv7l": "armv7l",
}


def marker_environment(env: Environment) -> dict[str, str]:
    """PEP 508 marker values for `env`: its Python version and implementation and its conda platform; what
    envguard does not know (a venv's platform) is left to packaging's default (this machine's)."""
    values: dict[str, str] = {}
    if env.python:
        parts = env.python.split(".")
        values["python_full_version"] = env.python
        values["python_version"] = ".".join(parts[:2])
    implementation = env.python_implementation or "cpython"
    values["implementation_name"] = implementation
    values["platform_python_implementation"] = {"cpython": "CPython", "pypy": "PyPy"}.get(
        implementation, implementation
    )
    system, _, arch = (env.platform or "").partition("-")
    if system in _PLATFORMS:
        values["sys_platform"], values["platform_system"], values["os_name"] = _PLATFORMS[system]
        machine = _MACHINES.get(arch, arch)
        values["platform_machine"] = "AMD64" if system == "win" and arch == "64" else machine
    return values


def requirement_names(
    requires: Sequence[str], extras: Sequence[str], values: dict[str, str]
) -> Iterator[str]:
    """The canonical names `requires` asks for here: a requirement whose marker holds for `values` with no
    extra, or with one of the package's `extras` (pip records no extras a user asked for, so an extra's
    dependency counts where it is installed: the caller keeps only installed names). Unparsable lines are
    skipped."""
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    for line in requires:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        marker = requirement.marker
        if marker is not None:
            tried = ("", *extras) if "extra" in str(marker) else ("",)
            try:
                holds = any(marker.evaluate({**values, "extra": extra}) for extra in tried)
            except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
                holds = True  # a marker packaging cannot judge: keep the edge rather than lose it
            if not holds:
                continue
        yield canonicalize_name(requirement.name)
