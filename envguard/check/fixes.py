"""How to get back to the target (pure): copy-pasteable commands built from the actual differences of a
check, shown at the end of a failing report (and in JSON as `fix`).

First the command that restores everything (rebuild from the lock or environment.yml), then the package-level
commands that change only what drifted: `conda install` of the exact locked builds, `conda remove` of extras,
`pip install name==version` / `pip uninstall` with the environment's own interpreter.
"""

from __future__ import annotations

from collections.abc import Iterable

from envguard.diff.changes import Difference
from envguard.model import Environment, Package
from envguard.output import command

_LOCKS = frozenset({"conda-lock", "explicit", "pixi-lock"})


def fix_commands(live: Environment, target: Environment, changes: Iterable[Difference]) -> tuple[str, ...]:
    """The commands that make LIVE match TARGET again, or () when nothing a command can fix drifted."""
    drift = [c for c in changes if not c.informational and c.category not in ("virtual", "both-managers")]
    drift = [c for c in drift if (c.category, c.name) != ("cuda", "driver")]  # the machine's, not the env's
    if not drift or not live.prefix:
        return ()
    prefix = live.prefix
    commands: list[str] = []
    path = target.source
    if path and target.kind in _LOCKS:
        commands.append(command("envguard", "create", "--lock", path, "-p", prefix, "--force"))
    elif path and target.kind == "environment.yml":
        commands.append(command("envguard", "create", "-f", path, "-p", prefix, "--force"))
    commands += _conda_commands(live, target, drift, prefix)
    commands += _pip_commands(live, target, drift)
    return tuple(commands)


def _conda_commands(
    live: Environment, target: Environment, drift: list[Difference], prefix: str
) -> list[str]:
    if live.kind == "venv":
        return []  # no conda in a plain venv: only the rebuild restores its conda part
    wanted: list[Package] = []
    extra: list[str] = []
    specs: list[str] = []
    conda_specs = {r.spec for r in target.requested if r.manager == "conda"}
    for change in drift:
        if change.category == "conda" and change.kind in ("changed", "only-a"):
            package = target.get(change.name, "conda")
            if package is not None:
                wanted.append(package)
        elif change.category == "conda" and change.kind == "only-b":
            extra.append(change.name)
        elif change.category == "specs" and change.kind == "unsatisfied" and change.name in conda_specs:
            specs.append(change.name)
    commands = []
    if wanted or specs:
        channels = dict.fromkeys(p.channel for p in wanted if p.channel)
        flags = ["--override-channels", *(w for c in channels for w in ("-c", c))] if channels else []
        exact = [f"{p.name}=={p.version}={p.build}" if p.build else f"{p.name}=={p.version}" for p in wanted]
        commands.append(command("conda", "install", "-p", prefix, *flags, *exact, *specs))
    if extra:
        commands.append(command("conda", "remove", "-p", prefix, *extra))
    return commands


def _pip_commands(live: Environment, target: Environment, drift: list[Difference]) -> list[str]:
    python = f"{live.prefix}/bin/python"
    install: list[str] = []
    remove: list[str] = []
    pip_specs = {r.spec for r in target.requested if r.manager == "pip"}
    for change in drift:
        if change.category == "pip" and change.kind in ("changed", "only-a"):
            package = target.get(change.name, "pip")
            if package is not None:
                install.append(_requirement(package))
        elif change.category == "pip" and change.kind == "only-b":
            remove.append(change.name)
        elif change.category == "specs" and change.kind == "unsatisfied" and change.name in pip_specs:
            install.append(change.name)
    commands = []
    if install:
        commands.append(command(python, "-m", "pip", "install", *install))
    if remove:
        commands.append(command(python, "-m", "pip", "uninstall", "-y", *remove))
    return commands


def _requirement(package: Package) -> str:
    origin = package.origin
    if origin is not None and origin.url and origin.vcs:
        commit = origin.commit_id or origin.requested_revision
        return f"{package.name} @ {origin.vcs}+{origin.url}" + (f"@{commit}" if commit else "")
    if origin is not None and origin.url and not origin.editable:
        return f"{package.name} @ {origin.url}"
    return f"{package.name}=={package.version}"


def relock_command(envfile: str, lock: str, exclude_newer: str | None = None) -> str:
    """The lock is stale for its environment.yml: solve it again (as of the same time, when it was solved as
    of one)."""
    dated = ("--exclude-newer", exclude_newer) if exclude_newer else ()
    return command("envguard", "lock", "-f", envfile, *dated, "-o", lock)


def reinstall_command(prefix: str, labels: Iterable[str]) -> str:
    """Files of these packages (`name-version-build` labels) were altered or removed: reinstall them."""
    specs = []
    for label in dict.fromkeys(labels):
        parts = label.rsplit("-", 2)
        specs.append(f"{parts[0]}=={parts[1]}={parts[2]}" if len(parts) == 3 and parts[2] else label)
    return command("conda", "install", "-p", prefix, "--force-reinstall", "--no-deps", *specs)
