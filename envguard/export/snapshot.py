"""`envguard snapshot`'s work, click-free: shared by the click command and the launcher's fast path."""

from __future__ import annotations

from envguard.errors import EXIT_OK


def snapshot(source: str | None, no_probe: bool, platform: str | None, output: str | None) -> int:
    """Read SOURCE and write it as envguard JSON to `output` (stdout when None); exit code 0."""
    from envguard.model import to_dict
    from envguard.output import dumps, emit, warn
    from envguard.prefix.probe import SKIP_WITH_NO_PROBE, skip_hint
    from envguard.sources import load

    with skip_hint(SKIP_WITH_NO_PROBE):
        env = load(source, platform=platform, probe=not no_probe)
    for message in env.warnings:
        warn(message)
    emit(dumps(to_dict(env)), output)
    return EXIT_OK
