"""How to get back to the target (pure): commands built from the actual differences of a check, shown at the
end of a failing report (and in JSON as `fix`). Each runs as printed, in the order printed, for the kind of
environment checked; every argument is quoted for the shell.

- Against a resolved file (conda-lock.yml, explicit, pixi.lock, a snapshot): `envguard sync PREFIX --lock
  LOCK --yes`, the smallest transaction that makes the environment the lock again, conda prefix or venv
  (`--files` when installed files were altered: those packages are reinstalled).
- Against an environment.yml: a conda environment is rebuilt from it (`envguard create -f ... --force`); a
  venv cannot hold its conda packages, so only its pip lines apply.
- Then, where the environment has pip of its own, the pip lines with a real requirement (`name==version`, the
  URL or folder the package came from) or an uninstall: each does nothing once the line before has fixed it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envguard.diff import Difference
from envguard.formats.localsource import local_path
from envguard.model import LOCAL_ORIGIN, Environment, Package
from envguard.output import command


def fix_commands(
    live: Environment, target: Environment, changes: Iterable[Difference], reinstall: Sequence[str] = ()
) -> tuple[str, ...]:
    """The commands that make LIVE match TARGET again, or () when nothing a command can fix drifted.
    `reinstall`: pip lines that reinstall packages whose files `--files` found altered, for a venv that
    nothing else repairs (one checked against an environment.yml)."""
    drift = [c for c in changes if not c.informational and c.category not in ("virtual", "both-managers")]
    drift = [c for c in drift if (c.category, c.name) != ("cuda", "driver")]  # the machine's, not the env's
    if not drift or not live.prefix:
        return ()
    prefix = live.prefix
    path = target.source or ""
    commands: list[str] = []
    files = any(c.category == "files" for c in drift)
    if path and not target.spec_only:  # a resolved file: a lock, an explicit spec, a snapshot
        if syncable(live, target, drift):
            flags = ("--files", "--yes") if files else ("--yes",)
            commands.append(command("envguard", "sync", prefix, "--lock", path, *flags))
    elif path and target.kind == "environment.yml" and live.kind != "venv":
        commands.append(command("envguard", "create", "-f", path, "-p", prefix, "--force"))
    elif files:
        commands += reinstall
    if has_pip(live):
        commands += _pip_commands(live, target, drift)
    return tuple(commands)


def syncable(live: Environment, target: Environment, drift: Iterable[Difference]) -> bool:
    """Whether `envguard sync` can make LIVE equal TARGET in place: not a venv that would need conda packages
    or another Python (a new environment is the way there; check's findings say so)."""
    if live.kind != "venv":
        return True
    return not target.conda_packages() and not any(c.category == "python" for c in drift)


def has_pip(env: Environment) -> bool:
    """The environment has pip of its own (`python -m pip` runs in it): as a pip or a conda package."""
    return env.get("pip", "pip") is not None or env.get("pip", "conda") is not None


def _pip_commands(live: Environment, target: Environment, drift: list[Difference]) -> list[str]:
    python = f"{live.prefix}/bin/python"
    install: list[str] = []
    remove: list[str] = []
    pip_specs = {r.spec for r in target.requested if r.manager == "pip"}
    for change in drift:
        if change.category == "pip" and change.kind in ("changed", "only-a"):
            package = target.get(change.name, "pip")
            if package is not None:
                install += requirement(package)
        elif change.category == "pip" and change.kind == "only-b":
            remove.append(change.name)
        elif change.category == "specs" and change.kind == "unsatisfied" and change.name in pip_specs:
            install.append(change.name)
    commands = []
    if install:
        commands.append(command(python, "-m", "pip", "install", "--no-deps", *install))
    if remove:
        commands.append(command(python, "-m", "pip", "uninstall", "-y", *remove))
    return commands


def requirement(package: Package) -> list[str]:
    """pip's arguments that install exactly this locked package: its VCS commit, its URL or folder (`-e
    FOLDER` for an editable project), else `name==version`. A local path the lock did not record is
    `name==version` too (pip then looks for it on the index): never the bare `file:`."""
    origin = package.origin
    if origin is not None and origin.url and origin.vcs:
        commit = origin.commit_id or origin.requested_revision
        return [f"{package.name} @ {origin.vcs}+{origin.url}" + (f"@{commit}" if commit else "")]
    if origin is not None and origin.url and origin.url != LOCAL_ORIGIN:
        folder = local_path(origin.url)
        if origin.editable and folder is not None:
            return ["-e", str(folder)]
        return [f"{package.name} @ {origin.url}"]
    return [f"{package.name}=={package.version}"]


def relock_command(envfile: str, lock: str, exclude_newer: str | None = None) -> str:
    """The lock is stale for its environment.yml: solve it again (as of the same time, when it was solved as
    of one)."""
    dated = ("--exclude-newer", exclude_newer) if exclude_newer else ()
    return command("envguard", "lock", "-f", envfile, *dated, "-o", lock)


def pip_reinstall_command(python: str, labels: Iterable[str]) -> str:
    """pip packages (`name version (pip)` labels) whose files were altered or removed: reinstall them."""
    pins = ["==".join(label.split()[:2]) for label in dict.fromkeys(labels)]
    return command(python, "-m", "pip", "install", "--force-reinstall", "--no-deps", *pins)
