"""`envguard diff`'s work and the comparison every feature uses: exact for resolved environments, by
satisfaction when one side only lists requests (an environment.yml)."""

from __future__ import annotations

from envguard.diff.changes import Diff
from envguard.diff.compare import Engine, exact
from envguard.errors import EXIT_DRIFT, EXIT_OK
from envguard.model import Environment
from envguard.output import Style


def diff_environments(a: Environment, b: Environment, *, engine: Engine = "deepdiff") -> Diff:
    """Compare A with B two-way: exact for resolved environments, by satisfaction when one side is
    spec-only."""
    if a.spec_only or b.spec_only:
        from envguard.diff.satisfy import diff_specs  # MatchSpec satisfaction: only for spec-only sides

        return diff_specs(a, b)
    return exact(a, b, engine=engine)


def diff_sources(a: str, b: str, *, platform: str | None, probe: bool) -> tuple[Diff, tuple[str, ...]]:
    """Read both SOURCEs and compare them; returns the diff and the readers' warnings."""
    from envguard.sources import load

    if probe:  # the probe's module (subprocess and friends) only where the probe runs
        from envguard.prefix.probe import skip_hint

        with skip_hint("run diff without --probe to skip the probe"):
            env_a = load(a, platform=platform, probe=True)
            env_b = load(b, platform=platform, probe=True)
    else:
        env_a = load(a, platform=platform)
        env_b = load(b, platform=platform)
    return diff_environments(env_a, env_b), (*env_a.warnings, *env_b.warnings)


def main(
    a: str, b: str, *, platform: str | None, probe: bool, show_all: bool, style: Style, output: str | None
) -> int:
    """`envguard diff A B`: print the comparison in STYLE; exit 0 equal, 1 different (the click command and
    the console script's own path for its common forms)."""
    from envguard.diff import render
    from envguard.output import Views, present, warn

    result, warnings = diff_sources(a, b, platform=platform, probe=probe)
    for message in warnings:
        warn(message)
    present(
        Views(
            result.to_dict, lambda: render.table(result, show_all=show_all), lambda: render.markdown(result)
        ),
        style,
        output,
    )
    return EXIT_OK if result.equal else EXIT_DRIFT
