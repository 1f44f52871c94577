"""`envguard diff`'s work and the comparison every feature uses: exact for resolved environments, by
satisfaction when one side only lists requests (an environment.yml)."""

from __future__ import annotations

from envguard.diff.changes import Diff
from envguard.diff.compare import Engine, exact
from envguard.diff.satisfy import diff_specs
from envguard.model import Environment
from envguard.sources import load


def diff_environments(a: Environment, b: Environment, *, engine: Engine = "deepdiff") -> Diff:
    """Compare A with B two-way: exact for resolved environments, by satisfaction when one side is
    spec-only."""
    if a.spec_only or b.spec_only:
        return diff_specs(a, b)
    return exact(a, b, engine=engine)


def diff_sources(a: str, b: str, *, platform: str | None, probe: bool) -> tuple[Diff, tuple[str, ...]]:
    """Read both SOURCEs and compare them; returns the diff and the readers' warnings."""
    if probe:
        from envguard.prefix.probe import skip_hint  # subprocess and signals: where the probe runs

        with skip_hint("run diff without --probe to skip the probe"):
            env_a = load(a, platform=platform, probe=True)
            env_b = load(b, platform=platform, probe=True)
    else:
        env_a = load(a, platform=platform)
        env_b = load(b, platform=platform)
    return diff_environments(env_a, env_b), (*env_a.warnings, *env_b.warnings)
