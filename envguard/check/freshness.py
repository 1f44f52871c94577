"""Is a lock still valid for its environment.yml? Decided without solving (the check conda-lock#479 asks for).

On every locked platform each spec of the file must match a locked record, every locked package must still be
needed by some spec (reachable through the locked dependencies), the channels must agree, and every platform
the file declares must be locked. The content hash is only a hint: another tool (or a harmless reformatting)
changes it without making the lock stale.
"""

from __future__ import annotations

import dataclasses
import itertools
import shlex
from collections.abc import Mapping
from pathlib import Path

from envguard.channels import merge, normalize
from envguard.check.discovery import find_lock
from envguard.check.fixes import relock_command
from envguard.check.report import CheckReport
from envguard.diff import Difference, unsatisfied
from envguard.errors import BadInputError, UsageError
from envguard.formats import detect_kind, envyml
from envguard.formats.condalock import read as condalock
from envguard.formats.condalock.meta import EXCLUDE_NEWER_KEY, REPRODUCE_KEY, SOURCE_KIND_KEY
from envguard.formats.condalock.read import LockData
from envguard.formats.condalock.write import input_hash
from envguard.model import Environment
from envguard.specs import canonical_name, parse_conda, pip_name


def staleness(
    specs_by_platform: Mapping[str, Environment], lock: LockData
) -> tuple[list[Difference], list[str]]:
    """Findings (drift when stale) and notes for a lock against the file read once per locked platform."""
    findings: list[Difference] = []
    notes: list[str] = []
    first = next(iter(specs_by_platform.values()), None)
    if first is not None:
        findings += _platforms(first, lock)
        findings += _channels(first, lock)
    for platform, specs in sorted(specs_by_platform.items()):
        env = lock.envs[platform]
        for change in unsatisfied(specs.requested, env):
            if change.kind == "unjudged":
                notes.append(f"{platform}: pip line {change.name!r} cannot be checked against a lock")
            elif change.b == "not installed":
                message = f"{platform}: {change.a} is not in the lock"
                findings.append(Difference("lock", "only-a", change.name, change.a, text=message))
            else:
                findings.append(
                    Difference(
                        "lock",
                        "unsatisfied",
                        change.name,
                        change.a,
                        change.b,
                        text=f"{platform}: {change.a} is not satisfied by the lock (locked: {change.b})",
                    )
                )
        findings += [Difference("lock", "", text=f"{platform}: {text}") for text in unneeded(specs, env)]
        if (
            lock.content_hash.get(platform) != input_hash(specs, platform, env.virtual_packages)
            and not findings
        ):
            notes.append(
                f"{platform}: the content hash differs from this file's (written by another tool or "
                "before an edit that does not change what is locked); the specs still match"
            )
    return findings, notes


def _platforms(specs: Environment, lock: LockData) -> list[Difference]:
    missing = sorted(set(specs.platforms) - set(lock.envs))
    return [
        Difference("lock", "", text=f"{specs.source} declares platform {p}, but the lock has no entry for it")
        for p in missing
    ]


def _channels(specs: Environment, lock: LockData) -> list[Difference]:
    wanted = tuple(normalize(c) for c in specs.channels if c != "nodefaults")
    have = tuple(normalize(c) for c in lock.channels if c != "nodefaults")  # older locks list it
    if wanted == have:
        return []
    text = f"channels differ: {specs.source} has [{', '.join(wanted)}], the lock has [{', '.join(have)}]"
    return [Difference("lock", "", text=text)]


def unneeded(specs: Environment, env: Environment) -> list[str]:
    """Locked packages no spec needs any more (not reachable from the specs through locked dependencies)."""
    by_name: dict[str, list[str]] = {}
    for package in env.packages:
        key = _key(package.manager, package.name)
        by_name.setdefault(key, []).extend(_key(package.manager, d.split(" ", 1)[0]) for d in package.depends)
    todo = [_key("conda", parse_conda(r.spec).name) for r in specs.requested if r.manager == "conda"]
    todo += [_key("pip", n) for r in specs.requested if r.manager == "pip" and (n := pip_name(r.spec))]
    if any(r.manager == "pip" and pip_name(r.spec) is None for r in specs.requested):
        return []  # `-r file` / `-e .` may need any pip package: reachability cannot be decided
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(by_name.get(name, ()))
        if name == "conda:python":  # conda adds pip to python (add_pip_as_python_dependency)
            todo.append("conda:pip")
    return [
        f"{p.describe()} is locked, but nothing in {specs.source} needs it any more (a removed spec?)"
        for p in env.packages
        if _key(p.manager, p.name) not in seen and not _pip_provided_by_conda(p.name, p.manager, seen)
    ]


def _key(manager: str, name: str) -> str:
    return f"{manager}:{canonical_name(name) if manager == 'pip' else name}"


def _pip_provided_by_conda(name: str, manager: str, seen: set[str]) -> bool:
    return manager == "pip" and f"conda:{name}" in seen


def made_from_live(lock: LockData) -> bool:
    """Whether envguard wrote the lock from a live environment (its exact packages, no environment.yml)."""
    kind = lock.custom.get(SOURCE_KIND_KEY)
    return kind is not None and kind != "environment.yml" and not lock.sources


def default_envyml(lock_path: Path, lock: LockData) -> Path:
    """The environment.yml a lock was made from: its first `sources` entry, else environment.yml beside it."""
    folder = lock_path.parent
    for source in lock.sources:
        candidate = folder / source
        if candidate.suffix in (".yml", ".yaml") and candidate.is_file():
            return candidate
    for name in ("environment.yml", "environment.yaml"):
        if (folder / name).is_file():
            return folder / name
    raise BadInputError(
        f"{lock_path}: cannot find the environment.yml it was made from (sources: "
        f"{', '.join(lock.sources) or 'none'}); pass -f environment.yml"
    )


def lock_freshness(lock: Path, envfile: Path | None) -> tuple[list[Difference], list[str], list[str]]:
    """Staleness findings of a conda-lock.yml against its environment.yml (without solving), notes, and the
    command that re-locks."""
    data = _read(lock)
    if made_from_live(data):
        return (
            [],
            [f"{lock} was locked from a live environment: its freshness for {envfile} is not judged"],
            [],
        )
    findings, notes, path = _freshness(lock, envfile, data)
    return findings, notes, [_relock(lock, path, data)] if findings else []


def _read(lock: Path) -> LockData:
    if detect_kind(lock) != "conda-lock":
        raise UsageError(f"{lock}: lock freshness needs a conda-lock.yml")
    return condalock.read_lock(lock)


def _freshness(
    lock: Path, envfile: Path | None, data: LockData | None = None
) -> tuple[list[Difference], list[str], Path]:
    """Findings, notes and the environment.yml."""
    data = data or _read(lock)
    path = envfile or default_envyml(lock, data)
    given = _given_channels(data)  # `lock -f FILE -c CHANNEL`: solved with these before the file's own
    specs = {}
    for platform in data.envs:
        read = envyml.read(path, platform=platform)
        specs[platform] = dataclasses.replace(read, channels=merge(given, read.channels)) if given else read
    findings, notes = staleness(specs, data)
    date = data.custom.get(EXCLUDE_NEWER_KEY)
    if date:
        notes.append(f"solved as of {date} (--exclude-newer): a re-lock keeps that date")
    return findings, notes, path


def _given_channels(lock: LockData) -> tuple[str, ...]:
    """The `-c` channels the lock was solved with, read from the Reproduce line envguard recorded in it."""
    try:
        words = shlex.split(lock.custom.get(REPRODUCE_KEY, ""))
    except ValueError:  # an unbalanced quote: edited by hand, or not envguard's
        return ()
    return tuple(value for flag, value in itertools.pairwise(words) if flag in ("-c", "--channel"))


def _relock(lock: Path, envfile: Path, data: LockData) -> str:
    """The command that re-locks: the lock's own Reproduce line (its platforms, CUDA choice, channels and
    --exclude-newer date; it runs from any folder) when it was made from this very file, else `envguard lock
    -f FILE -o LOCK` (as of the same date, when it was solved as of one)."""
    reproduce = data.custom.get(REPRODUCE_KEY, "")
    own = data.sources and (lock.parent / data.sources[0]).resolve() == envfile.resolve()
    if own and reproduce:
        return reproduce
    return relock_command(str(envfile), str(lock), data.custom.get(EXCLUDE_NEWER_KEY))


def lock_fresh_report(lock: Path | None, envfile: Path | None) -> CheckReport:
    """`check --lock-fresh`: the lock against environment.yml only; a lock of a live environment was solved
    from no file, so there is nothing to compare (one line, clean)."""
    path = lock or find_lock()
    data = _read(path)
    if made_from_live(data):
        why = (
            f"{path} was locked from a live environment, not solved from an environment.yml: nothing to "
            "compare (`envguard check` compares an environment with it)"
        )
        return CheckReport(str(path), str(envfile or ""), nothing_to_compare=why)
    findings, notes, shown = _freshness(path, envfile, data)
    fixes = (_relock(path, shown, data),) if findings else ()
    return CheckReport(str(path), str(shown), tuple(findings), tuple(notes), fixes)
