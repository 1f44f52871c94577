"""`envguard diff A B [--platform P] [--probe] [--json | --markdown]`: two-way, grouped; exit 0 equal, 1 different."""

from __future__ import annotations

import click

from envguard.errors import UsageError


@click.command("diff")
@click.argument("a")
@click.argument("b")
@click.option(
    "--platform", help="Platform entry to read from conda-lock.yml / pixi.lock (default: this machine's)."
)
@click.option(
    "--probe", is_flag=True, help="Run the fingerprint probe in live environments (compares RNG streams)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema_version 1).")
@click.option("--markdown", is_flag=True, help="Print Markdown for a PR comment.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE instead of stdout.")
def command(
    a: str, b: str, platform: str | None, probe: bool, as_json: bool, markdown: bool, output: str | None
) -> int:
    """Compare A with B: each a prefix, name:ENV, environment.yml, conda-lock.yml, explicit, pixi.lock or snapshot."""
    from envguard.diff import render
    from envguard.diff.compare import diff_environments
    from envguard.output import emit, warn
    from envguard.sources import load

    if as_json and markdown:
        raise UsageError("--json and --markdown are alternatives; give one")
    env_a = load(a, platform=platform, probe=probe)
    env_b = load(b, platform=platform, probe=probe)
    for message in (*env_a.warnings, *env_b.warnings):
        warn(message)
    result = diff_environments(env_a, env_b)
    text = (
        render.as_json(result) if as_json else render.markdown(result) if markdown else render.table(result)
    )
    emit(text, output)
    return 0 if result.equal else 1
