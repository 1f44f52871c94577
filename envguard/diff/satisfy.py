"""Satisfaction: does a resolved environment meet what a spec-only source (environment.yml) asks for?

Each conda spec must match an installed/locked package (rattler MatchSpec semantics: version, build glob,
channel), each pip line a pip package (PEP 440), and every conda package must come from one of the file's
channels.
"""

from __future__ import annotations

from collections.abc import Sequence

from envguard.channels import expand_channels, normalize
from envguard.diff.changes import Diff, Difference
from envguard.errors import BadInputError
from envguard.model import Environment, Package, RequestedSpec
from envguard.specs import canonical_name, conda_matches, parse_conda, pip_matches, pip_name


def diff_specs(a: Environment, b: Environment) -> Diff:
    """A vs B where at least one side is spec-only."""
    if a.spec_only and b.spec_only:
        return _spec_sets(a, b)
    specs, resolved, spec_side = (a, b, "a") if a.spec_only else (b, a, "b")
    changes = unsatisfied(specs.requested, resolved, spec_side) + channel_violations(
        specs, resolved, spec_side
    )
    notes = [] if specs.channels else [f"{specs.source}: no `channels:`; channels not checked"]
    return Diff(a.source or a.kind, b.source or b.kind, "satisfaction", tuple(changes), tuple(notes))


def unsatisfied(
    requested: Sequence[RequestedSpec], env: Environment, spec_side: str = "a"
) -> list[Difference]:
    """One Difference per spec the environment does not satisfy (and an `unjudged` one per line it cannot
    judge)."""
    changes: list[Difference] = []
    for request in requested:
        if request.manager == "conda":
            parsed = parse_conda(request.spec)
            candidate = _conda_candidate(env, parsed.name)
            ok = candidate is not None and conda_matches(parsed, candidate)
        else:
            name = pip_name(request.spec)
            candidate = _pip_candidate(env, name) if name else None
            verdict = _pip_verdict(request.spec, candidate) if name else None
            if verdict is None:
                changes.append(
                    _change("unjudged", request, candidate, spec_side, "cannot judge this pip line")
                )
                continue
            ok = verdict
        if not ok:
            changes.append(_change("unsatisfied", request, candidate, spec_side, "not installed"))
    return changes


def _conda_candidate(env: Environment, name: str) -> Package | None:
    """The conda package of that name; in a venv (python is no conda package there) `python` is its
    interpreter."""
    found = env.get(name, "conda")
    if found is None and name == "python" and env.python and not env.spec_only:
        return Package("conda", "python", env.python)
    return found


def _pip_candidate(env: Environment, name: str) -> Package | None:
    """The pip package of that name, else a conda package providing it (conda installs many PyPI projects)."""
    found = env.get(name, "pip")
    if found is not None:
        return found
    return next((p for p in env.conda_packages() if canonical_name(p.name) == name), None)


def _pip_verdict(line: str, package: Package | None) -> bool | None:
    if package is None:
        return False
    as_pip = (
        package if package.manager == "pip" else Package("pip", canonical_name(package.name), package.version)
    )
    return pip_matches(line, as_pip)


def _change(
    kind: str, request: RequestedSpec, found: Package | None, spec_side: str, missing: str
) -> Difference:
    have = found.describe() if found is not None else missing
    spec = request.spec if request.manager == "conda" else f"pip: {request.spec}"
    a, b = (spec, have) if spec_side == "a" else (have, spec)
    return Difference("specs", kind, request.spec, a, b)


def allowed_channels(specs: Environment) -> set[str]:
    """The file's channels (`defaults` expanded, `nodefaults` dropped) plus channels named as
    `channel::pkg`."""
    texts = [r.spec for r in specs.requested if r.manager == "conda"]
    return {normalize(c) for c in expand_channels(specs.channels, texts)}


def channel_violations(specs: Environment, env: Environment, spec_side: str = "a") -> list[Difference]:
    """Conda packages whose channel is not among the file's channels."""
    if not specs.channels:
        return []
    allowed = allowed_channels(specs)
    listed = ", ".join(sorted(allowed))
    changes = []
    for package in env.conda_packages():
        if package.channel and package.channel not in allowed:
            wanted, have = f"one of {listed}", f"from {package.channel}"
            a, b = (wanted, have) if spec_side == "a" else (have, wanted)
            changes.append(Difference("channels", "changed", package.name, a, b, ("channel",)))
    return changes


def _spec_sets(a: Environment, b: Environment) -> Diff:
    """Two spec-only files: requested specs and channels compared as sets."""
    changes: list[Difference] = []
    specs_a = {f"{r.manager}:{r.spec}" for r in a.requested}
    specs_b = {f"{r.manager}:{r.spec}" for r in b.requested}
    only_a, only_b = _by_name(specs_a - specs_b), _by_name(specs_b - specs_a)
    for name in sorted(set(only_a) & set(only_b)):  # one package in two spec styles: `cpuonly=2.0` / `=2.0=0`
        if len(only_a[name]) == len(only_b[name]) == 1:
            key_a, key_b = only_a.pop(name)[0], only_b.pop(name)[0]
            changes.append(
                Difference(
                    "specs",
                    "changed",
                    name.split(":", 1)[1],
                    key_a.replace(":", " ", 1),
                    key_b.replace(":", " ", 1),
                    ("spec",),
                )
            )
    for key in sorted(k for keys in only_a.values() for k in keys):
        changes.append(Difference("specs", "only-a", key.split(":", 1)[1], a=key.replace(":", " ", 1)))
    for key in sorted(k for keys in only_b.values() for k in keys):
        changes.append(Difference("specs", "only-b", key.split(":", 1)[1], b=key.replace(":", " ", 1)))
    if tuple(a.channels) != tuple(b.channels):
        changes.append(
            Difference("channels", "changed", "channels", ", ".join(a.channels), ", ".join(b.channels))
        )
    return Diff(a.source or a.kind, b.source or b.kind, "specs", tuple(changes))


def _by_name(keys: set[str]) -> dict[str, list[str]]:
    """`manager:spec` keys grouped by `manager:package name` (a spec that names no package keeps its text)."""
    grouped: dict[str, list[str]] = {}
    for key in keys:
        manager, spec = key.split(":", 1)
        try:
            name = parse_conda(spec).name if manager == "conda" else (pip_name(spec) or spec)
        except BadInputError:
            name = spec
        grouped.setdefault(f"{manager}:{name}", []).append(key)
    return grouped
