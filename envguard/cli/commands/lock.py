"""`envguard lock [SOURCE] [-f environment.yml] [--platform P ...] [--cuda VER | --no-cuda] [-o FILE]`."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click

from envguard.errors import UsageError
from envguard.lock import plan as locking
from envguard.output import warn


@click.command("lock")
@click.argument("source", required=False)
@click.option("-f", "--file", "envfile", type=click.Path(dir_okay=False), help="Solve this environment.yml.")
@click.option(
    "--platform",
    "platforms",
    multiple=True,
    help="Platform to lock (repeatable; default: the file's `platforms:` or this machine's).",
)
@click.option("--cuda", "cuda", metavar="VERSION", help="Lock for GPU machines: solve with __cuda=VERSION.")
@click.option("--no-cuda", is_flag=True, help="Lock for machines without a GPU (no __cuda).")
@click.option("--no-probe", is_flag=True, help="Live source: do not run the fingerprint probe.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["conda-lock", "explicit"]),
    default="conda-lock",
    show_default=True,
    help="explicit: one @EXPLICIT file per platform.",
)
@click.option(
    "-o",
    "--output",
    help="Output file (default conda-lock.yml, or conda-{platform}.lock for "
    "explicit; `{platform}` is replaced; `-` for stdout).",
)
def command(
    source: str | None,
    envfile: str | None,
    platforms: tuple[str, ...],
    cuda: str | None,
    no_cuda: bool,
    no_probe: bool,
    fmt: str,
    output: str | None,
) -> int:
    """Write a conda-lock.yml from a live environment (exact, no solving) or an environment.yml (solved)."""
    if cuda and no_cuda:
        raise UsageError("--cuda and --no-cuda contradict each other; give one")
    target = output or ("conda-{platform}.lock" if fmt == "explicit" else "conda-lock.yml")
    yml = _environment_yml(source, envfile)
    explicit = ["--format", "explicit"] if fmt == "explicit" else []
    if yml is not None and not (cuda or no_cuda) and "CONDA_OVERRIDE_CUDA" in os.environ:
        override = os.environ["CONDA_OVERRIDE_CUDA"].strip()  # as create and conda read it: "" means no GPU
        cuda, no_cuda = override or None, not override
    if yml is not None:
        plan = locking.from_environment_yml(yml, _platforms(yml, platforms), False if no_cuda else cuda)
        reproduce = _reproduce_yml(yml, target, plan, cuda, no_cuda, explicit)
        sources = [_relative(yml, target)]
    else:
        if cuda or no_cuda:
            raise UsageError(
                "--cuda/--no-cuda apply to `-f environment.yml`; a live environment is locked as is"
            )
        plan, reproduce = _live_plan(source, platforms, no_probe, target, explicit)
        sources = []
    for message in plan.warnings:
        warn(message)
    if fmt == "explicit":
        return _write_explicit(plan, target, reproduce)
    return _write_yaml(plan, target, reproduce, sources)


def _environment_yml(source: str | None, envfile: str | None) -> Path | None:
    if envfile:
        if source:
            raise UsageError("give either SOURCE or -f environment.yml, not both")
        return Path(envfile)
    if source and Path(source).is_file():
        from envguard.formats import detect_kind

        if detect_kind(Path(source)) == "environment.yml":
            return Path(source)
        raise UsageError(f"{source}: lock from an environment (prefix, name:ENV) or `-f environment.yml`")
    return None


def _platforms(path: Path, given: tuple[str, ...]) -> list[str]:
    if given:
        return sorted(set(given))
    from envguard.formats import envyml
    from envguard.machine.platform import current_platform

    declared = envyml.read(path).platforms
    return sorted(set(declared)) if declared else [current_platform()]


def _live_plan(
    source: str | None, platforms: tuple[str, ...], no_probe: bool, target: str, flags: list[str]
) -> tuple[locking.LockPlan, str]:
    from envguard.sources import read_live, resolve_prefix

    prefix = resolve_prefix(source)
    env = read_live(prefix)
    if platforms and set(platforms) != {env.platform}:
        raise UsageError(
            f"{prefix}: a live environment is locked for its own platform ({env.platform}) only; drop "
            "--platform"
        )
    if not no_probe:
        env, problem = locking.probe_into(env, prefix)
        if problem:
            warn(problem)
    parts = [
        "envguard lock",
        _live_source(source, prefix, target),
        *(["--no-probe"] if no_probe else []),
        *flags,
    ]
    return locking.from_live(env), " ".join([*parts, "-o", shlex.quote(Path(target).name)])


def _live_source(source: str | None, prefix: Path, target: str) -> str:
    """How the Reproduce line names a live environment, runnable from the lock's folder: `name:ENV` when conda
    knows it by name, else its path relative to the lock's folder (no machine paths in the lock)."""
    from envguard.errors import BadInputError
    from envguard.prefix.condaconfig import find_named

    if source and source.startswith("name:"):
        return shlex.quote(source)
    resolved = prefix.resolve()
    try:
        if find_named(prefix.name).resolve() == resolved:
            return shlex.quote(f"name:{prefix.name}")
    except BadInputError:
        pass
    return shlex.quote(_relative(prefix, target))


def _reproduce_yml(
    path: Path, target: str, plan: locking.LockPlan, cuda: str | None, no_cuda: bool, flags: list[str]
) -> str:
    parts = ["envguard lock -f", _relative(path, target), *flags]
    parts += [f"--platform {p}" for p in sorted(plan.envs)]
    if cuda:
        parts.append(f"--cuda {cuda}")
    elif no_cuda:
        parts.append("--no-cuda")
    parts.append(f"-o {shlex.quote(Path(target).name)}")  # run from the lock's folder: no machine paths
    return " ".join(parts)


def _relative(path: Path, target: str) -> str:
    """`path` relative to the lock's folder (conda-lock's `sources` convention)."""
    base = Path(target).parent if target != "-" else Path(".")
    try:
        return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return path.name


def _write_yaml(plan: locking.LockPlan, target: str, reproduce: str, sources: list[str]) -> int:
    from envguard.formats.condalock.write import render_lock, write_lock

    name = Path(target).name if target != "-" else "conda-lock.yml"
    text = render_lock(
        plan.envs,
        sources=sources,
        content_hashes=plan.content_hashes,
        channels=plan.channels,
        reproduce=reproduce,
        source_kind=plan.source_kind,
        lock_name=name,
    )
    if target == "-":
        click.echo(text, nl=False)
    else:
        write_lock(target, text)
        _summary(plan, target)
    return 0


def _write_explicit(plan: locking.LockPlan, target: str, reproduce: str) -> int:
    from envguard.formats.condalock.write import render_explicit, write_lock

    if len(plan.envs) > 1 and "{platform}" not in target:
        raise UsageError(
            "several platforms need one file each: put `{platform}` in -o (e.g. conda-{platform}.lock)"
        )
    for platform, env in sorted(plan.envs.items()):
        if env.pip_packages():
            warn(
                f"{platform}: {len(env.pip_packages())} pip package(s) written as comments; conda ignores "
                "them"
            )
        text = render_explicit(env, plan.content_hashes[platform], reproduce)
        path = target.replace("{platform}", platform)
        if path == "-":
            click.echo(text, nl=False)
        else:
            write_lock(path, text)
            _summary(plan, path, only=platform)
    return 0


def _summary(plan: locking.LockPlan, path: str, only: str | None = None) -> None:
    parts = []
    for platform, env in sorted(plan.envs.items()):
        if only is None or platform == only:
            parts.append(f"{platform} ({len(env.conda_packages())} conda, {len(env.pip_packages())} pip)")
    click.echo(f"envguard: wrote {path}: {', '.join(parts)}", err=True)
