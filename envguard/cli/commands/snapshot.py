"""`envguard snapshot [SOURCE] [--no-probe] [--platform P] [-o FILE]`: print an environment as envguard
JSON. The console script answers it itself (envguard.cli.launcher): the body imports what it runs."""

from __future__ import annotations

from envguard.cli.grammar import Arg, Command, Opt
from envguard.errors import EXIT_OK

GRAMMAR = Command(
    "snapshot",
    [Arg("source", required=False)],
    [
        Opt("--no-probe", flag=True, help="Skip the fingerprint probe (no interpreter is started)."),
        Opt(
            "--platform",
            platform=True,
            help="Platform to read from a multi-platform lock (default: this machine's).",
        ),
        Opt(
            "-o",
            "--output",
            kind="path",
            dir_okay=False,
            help="Write to FILE (atomically) instead of stdout.",
        ),
    ],
)


def run(source: str | None, no_probe: bool, platform: str | None, output: str | None) -> int:
    """Print SOURCE (a prefix, name:ENV or any supported file; default: the active environment) as JSON."""
    from envguard.export.snapshot import snapshot
    from envguard.model import to_dict
    from envguard.output import dumps, emit, warn

    env = snapshot(source, probe=not no_probe, platform=platform)
    for message in env.warnings:
        warn(message)
    emit(dumps(to_dict(env)), output)
    return EXIT_OK
