"""`envguard lock`'s work: plan (live or solved), render conda-lock.yml or explicit files, write them
atomically. Returns what it wrote, the text meant for stdout (`-o -`) and the warnings; the command prints
them."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from envguard.cuda import family_warnings
from envguard.engine.solver import parse_date
from envguard.errors import UsageError
from envguard.export import replaced_warning, tracked_by_git
from envguard.formats import detect_kind, pixiwrite
from envguard.formats.condalock.write import (
    NO_CONDA_PIP,
    by_version_only,
    lacks_conda_pip,
    render_explicit,
    render_lock,
    write_lock,
)
from envguard.lock import pipsource
from envguard.lock.plan import (
    CudaChoice,
    LockPlan,
    from_environment_yml,
    from_live,
    local_paths,
    probe_into,
)
from envguard.lock.reproduce import Reproduce, yml_line
from envguard.output import shell_quote
from envguard.prefix.lockref import remember
from envguard.sources import read_live, resolve_prefix

_CUDA = re.compile(r"[0-9]+(\.[0-9]+)*")  # a CUDA version as __cuda takes it: 12, 12.4, 12.4.1


@dataclass(frozen=True)
class LockOptions:
    """Everything `envguard lock` was asked."""

    source: str | None = None
    envfile: str | None = None
    platforms: tuple[str, ...] = ()
    cuda: str | None = None
    no_cuda: bool = False
    no_probe: bool = False
    fmt: str = "conda-lock"
    output: str | None = None
    include_local: bool = False  # write the local paths of pip packages installed from this machine's disk
    pixi_version: int = pixiwrite.VERSION
    exclude_newer: str | None = None  # solve as of this date (environment.yml only)
    channels: tuple[str, ...] = ()  # -c: before the environment.yml's own channels


@dataclass(frozen=True)
class LockResult:
    """The files written (a summary line each), text meant for stdout (`-o -`), and warnings."""

    written: tuple[str, ...]
    stdout: str
    warnings: tuple[str, ...]


def lock(options: LockOptions) -> LockResult:
    """Plan the lock (a live environment exactly, or an environment.yml solved per platform) and write it."""
    o = options
    if o.cuda and o.no_cuda:
        raise UsageError("--cuda and --no-cuda contradict each other; give one")
    if o.cuda is not None and not _CUDA.fullmatch(o.cuda):
        raise UsageError(f"--cuda {o.cuda!r} is not a CUDA version; give one such as 12.4, or --no-cuda")
    if o.pixi_version != pixiwrite.VERSION and o.fmt != "pixi":
        raise UsageError("--pixi-version applies to --format pixi")
    target = o.output or _DEFAULT_TARGET.get(o.fmt, "conda-lock.yml")
    yml = _environment_yml(o.source, o.envfile)
    explicit = ["--format", o.fmt] if o.fmt in _DEFAULT_TARGET else []
    if o.pixi_version != pixiwrite.VERSION:
        explicit += ["--pixi-version", str(o.pixi_version)]
    given_cuda, no_cuda = o.cuda, o.no_cuda
    live: list[str] = []  # what reading a live environment warned about
    if yml is not None and not (given_cuda or no_cuda) and "CONDA_OVERRIDE_CUDA" in os.environ:
        override = os.environ["CONDA_OVERRIDE_CUDA"].strip()  # as create and conda read it: "" means no GPU
        given_cuda, no_cuda = override or None, not override
        if override and not _CUDA.fullmatch(override):
            raise UsageError(f"CONDA_OVERRIDE_CUDA={override!r} is not a CUDA version; set one such as 12.4")
    if yml is not None:
        cuda: CudaChoice = False if no_cuda else given_cuda
        date = parse_date(o.exclude_newer) if o.exclude_newer else None
        plan = from_environment_yml(yml, sorted(set(o.platforms)), cuda, date, o.channels)
        given = [f"-c {shell_quote(c)}" for c in o.channels]
        dated = ["--exclude-newer", plan.exclude_newer] if plan.exclude_newer else []
        reproduce = _reproduce_yml(yml, target, plan, given_cuda, no_cuda, [*given, *explicit, *dated])
        sources = [_relative(yml, target)]
    else:
        if o.cuda or o.no_cuda or o.exclude_newer:
            raise UsageError(
                "--cuda/--no-cuda and --exclude-newer apply to `-f environment.yml`; a live environment is "
                "locked as is"
            )
        if o.channels:
            raise UsageError(
                "-c/--channel applies to -f environment.yml (the channels to solve it with); a live "
                "environment is locked as is"
            )
        flags = [*explicit, *(["--include-local"] if o.include_local else [])]
        plan, reproduce, live = _live_plan(o.source, o.platforms, o.no_probe, target, flags, o.include_local)
        sources = []
    if o.fmt == "explicit":
        done = _write_explicit(plan, target, reproduce)
    elif o.fmt == "pixi":
        done = _write_pixi(plan, target, reproduce, o.pixi_version)
    else:
        done = _write_yaml(plan, target, reproduce, sources)
    if yml is None and target != "-":
        _tie(resolve_prefix(o.source), target, plan)
    family = [
        w for platform, env in sorted(plan.envs.items()) for w in family_warnings(env.packages, platform)
    ]
    return LockResult(done.written, done.stdout, (*plan.warnings, *live, *family, *done.warnings))


def _tie(prefix: Path, target: str, plan: LockPlan) -> None:
    """A live environment now follows the lock written from it (envguard.prefix.lockref): the conda plugin
    and the notebook extension check it against that lock without being told."""
    for platform in plan.envs:
        remember(prefix, Path(target.replace("{platform}", platform)))


_DEFAULT_TARGET = {"explicit": "conda-{platform}.lock", "pixi": "pixi.lock"}


def _environment_yml(source: str | None, envfile: str | None) -> Path | None:
    if envfile:
        if source:
            raise UsageError("give either SOURCE or -f environment.yml, not both")
        return Path(envfile)
    if source and os.path.isfile(source):  # os.path: a name too long is no file (sources.resolve says why)
        if detect_kind(Path(source)) == "environment.yml":
            return Path(source)
        raise UsageError(f"{source}: lock from an environment (prefix, name:ENV) or `-f environment.yml`")
    return None


def _live_plan(
    source: str | None,
    platforms: tuple[str, ...],
    no_probe: bool,
    target: str,
    flags: list[str],
    include_local: bool = False,
) -> tuple[LockPlan, str, list[str]]:
    """The live environment's plan, its Reproduce line and the warnings reading it gave."""
    prefix = resolve_prefix(source)
    env = read_live(prefix)
    warnings: list[str] = []
    if platforms and set(platforms) != {env.platform}:
        raise UsageError(
            f"{prefix}: a live environment is locked for its own platform ({env.platform}) only; drop "
            "--platform"
        )
    if not no_probe:
        env, problem = probe_into(env, prefix)
        if problem:
            warnings.append(problem)
    env, local = local_paths(env, _folder(target), include_local)
    if pipsource.enabled():  # the wheel each index install came from, its sha256 and index
        env, unread = pipsource.locate(env, prefix)
        warnings += unread
    if local:
        warnings.append(
            f"pip package(s) {', '.join(local)} were installed from a local path; locked as name==version "
            "without the path (pass --include-local to write it)"
        )
    where = Reproduce(target)
    line = where.line([where.live_source(source, prefix), *(["--no-probe"] if no_probe else []), *flags])
    return from_live(env), line, warnings


def _reproduce_yml(
    path: Path, target: str, plan: LockPlan, cuda: str | None, no_cuda: bool, flags: list[str]
) -> str:
    platforms = [] if plan.platforms_from_file else sorted(plan.envs)  # else the file's `platforms:` decide
    return yml_line(path, target, platforms, cuda, no_cuda, flags)


def _folder(target: str) -> Path:
    """The folder the lock is written in (the current one for `-o -`): relative local sources are relative
    to it."""
    return (Path(target).parent if target != "-" else Path(".")).absolute()


def _relative(path: Path, target: str) -> str:
    """`path` relative to the lock's folder (conda-lock's `sources` convention)."""
    base = Path(target).parent if target != "-" else Path(".")
    try:
        return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return path.name


def _write_yaml(plan: LockPlan, target: str, reproduce: str, sources: list[str]) -> LockResult:
    name = Path(target).name if target != "-" else "conda-lock.yml"
    text = render_lock(
        plan.envs,
        sources=sources,
        content_hashes=plan.content_hashes,
        channels=plan.channels,
        reproduce=reproduce,
        source_kind=plan.source_kind,
        lock_name=name,
        exclude_newer=plan.exclude_newer,
    )
    unknown = sorted(  # a local path left unwritten is warned about where it is left out
        {p.name for env in plan.envs.values() for p in by_version_only(env) if p.origin is None}
    )
    warnings = (
        (
            f"pip package(s) {', '.join(unknown)}: no wheel URL is known (no configured index or find-links "
            "lists their file), so they are locked as name==version in envguard's metadata only: "
            "`conda-lock install` leaves them out (the lock's header says so)",
        )
        if unknown
        else ()
    )
    if any(lacks_conda_pip(env) for env in plan.envs.values()):
        warnings = (*warnings, NO_CONDA_PIP)
    if target == "-":
        return LockResult((), text, warnings)
    return LockResult((_summary(plan, target),), "", (*warnings, *_write(target, text)))


def _write_explicit(plan: LockPlan, target: str, reproduce: str) -> LockResult:
    if len(plan.envs) > 1 and "{platform}" not in target:
        raise UsageError(
            "several platforms need one file each: put `{platform}` in -o (e.g. conda-{platform}.lock)"
        )
    written: list[str] = []
    stdout: list[str] = []
    warnings: list[str] = []
    for platform, env in sorted(plan.envs.items()):
        if env.pip_packages():
            warnings.append(
                f"{platform}: {len(env.pip_packages())} pip package(s) written as comments; conda ignores "
                "them"
            )
        text, left_out = render_explicit(env, plan.content_hashes[platform], reproduce)
        warnings.extend(f"{platform}: {message}" for message in left_out)
        path = target.replace("{platform}", platform)
        if path == "-":
            stdout.append(text)
        else:
            warnings += _write(path, text)
            written.append(_summary(plan, path, only=platform))
    return LockResult(tuple(written), "".join(stdout), tuple(warnings))


def _write_pixi(plan: LockPlan, target: str, reproduce: str, version: int) -> LockResult:
    rendered = pixiwrite.render(plan.envs, plan.channels, reproduce, version)
    if target == "-":
        return LockResult((), rendered.text, tuple(rendered.left_out))
    replaced = _write(target, rendered.text)
    return LockResult((f"wrote {target}: {rendered.summary()}",), "", (*rendered.left_out, *replaced))


def _write(path: str, text: str) -> tuple[str, ...]:
    """Write the lock (atomically); a warning when it replaced other content in a file git tracks, with the
    git lines that show and undo it (as export and create -f say it)."""
    target = Path(path)
    try:
        before = target.read_bytes() if target.is_file() else None
    except OSError:
        before = None  # unreadable: written over (or refused) as before, nothing to compare
    write_lock(target, text)
    if before is None or before == text.encode("utf-8") or not tracked_by_git(target):
        return ()
    return (replaced_warning(path, anywhere=True),)


def _summary(plan: LockPlan, path: str, only: str | None = None) -> str:
    parts = []
    for platform, env in sorted(plan.envs.items()):
        if only is None or platform == only:
            parts.append(f"{platform} ({len(env.conda_packages())} conda, {len(env.pip_packages())} pip)")
    return f"wrote {path}: {', '.join(parts)}"
