"""`envguard check [SOURCE] [--lock FILE | -f environment.yml] [--rng] [--files] [--lock-fresh] [--json]`.

Module imports stay minimal: an unchanged environment is confirmed by `envguard.statcache` before anything heavy
(yaml, rattler, deepdiff, rich, torch) is imported.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from envguard.errors import UsageError


@click.command("check")
@click.argument("source", required=False)
@click.option(
    "--lock",
    "lock",
    type=click.Path(dir_okay=False),
    help="Lock to check against (default: conda-lock.yml here or in a parent, or [tool.envguard] lock).",
)
@click.option(
    "-f",
    "--file",
    "envfile",
    type=click.Path(dir_okay=False),
    help="environment.yml: check that every spec is satisfied and channels respected.",
)
@click.option("--platform", help="Platform entry of the lock to use (default: the environment's).")
@click.option(
    "--rng", is_flag=True, help="Re-run the fingerprint probe and compare with the lock's fingerprints."
)
@click.option(
    "--files", is_flag=True, help="Verify every installed file against its package's recorded hashes."
)
@click.option(
    "--lock-fresh",
    is_flag=True,
    help="Only check that the lock still satisfies environment.yml on every platform (no environment).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema_version 1).")
@click.option("--markdown", is_flag=True, help="Print Markdown for a PR comment.")
@click.option("--no-cache", is_flag=True, help="Always run the full comparison.")  # fmt: skip
def command(
    source: str | None, lock: str | None, envfile: str | None, platform: str | None, rng: bool, files: bool,
    lock_fresh: bool, as_json: bool, markdown: bool, no_cache: bool,
) -> int:  # fmt: skip
    """Check SOURCE (default: the active environment) against a lock or an environment.yml; exit 0 clean, 1 drift."""
    if as_json and markdown:
        raise UsageError("--json and --markdown are alternatives; give one")
    style = "json" if as_json else "markdown" if markdown else "human"
    if lock_fresh:
        if source or rng or files:
            raise UsageError("--lock-fresh checks files only; drop SOURCE, --rng and --files")
        return _lock_fresh(lock, envfile, style)
    lock_path = Path(lock) if lock else None
    if lock_path is None and envfile is None:
        from envguard.config import find_lock

        lock_path = find_lock()
    inputs = [p for p in (lock_path, Path(envfile) if envfile else None) if p is not None]
    fast = None if (rng or files or no_cache) else _fast(source, inputs, platform, style)
    if fast is not None:
        sys.stdout.write(fast)
        return 0
    from envguard.checkrun import run_check

    outcome = run_check(source, lock_path, Path(envfile) if envfile else None, platform=platform, rng=rng,
                        files=files)  # fmt: skip
    return _finish(outcome, style, None if (rng or files or no_cache) else (inputs, platform))


def _fast(source: str | None, inputs: list[Path], platform: str | None, style: str) -> str | None:
    """The stored output of the last clean full check when nothing it depends on has changed."""
    from envguard import statcache
    from envguard.sources import resolve_prefix

    if source is not None and Path(source).is_file():
        return None
    try:
        data = [p.read_bytes() for p in inputs]
    except OSError:
        return None  # the full path reports the unreadable file properly
    prefix = resolve_prefix(source)
    key = statcache.check_key(data, prefix, _options(inputs, platform))
    outputs = statcache.lookup(key, statcache.stat_fingerprint(prefix))
    text = outputs.get(style) if outputs else None
    return text if isinstance(text, str) else None


def _options(inputs: list[Path], platform: str | None) -> dict[str, str]:
    """Everything besides file contents and the prefix that the output depends on."""
    from envguard.virtual import cache_key

    paths = "|".join(os.path.abspath(p) for p in inputs)
    return {"platform": platform or "", "virtual": cache_key(), "paths": paths}


def _finish(outcome: object, style: str, cache_args: tuple[list[Path], str | None] | None) -> int:
    from envguard.checkrun import CheckOutcome, render_all

    assert isinstance(outcome, CheckOutcome)
    outputs = render_all(outcome.report)
    sys.stdout.write(outputs[style])
    if cache_args is not None and outcome.fingerprint is not None:
        from envguard import statcache

        inputs, platform = cache_args
        data = [p.read_bytes() for p in inputs]
        key = statcache.check_key(data, outcome.prefix, _options(inputs, platform))
        cached = render_all(outcome.report, cached=True)
        statcache.store(key, outcome.fingerprint, outcome.report.clean, cached)
    return 0 if outcome.report.clean else 1


def _lock_fresh(lock: str | None, envfile: str | None, style: str) -> int:
    from envguard.checkrun import lock_fresh_report, render_all

    report = lock_fresh_report(Path(lock) if lock else None, Path(envfile) if envfile else None)
    sys.stdout.write(render_all(report)[style])
    return 0 if report.clean else 1
