"""`envguard diff A B [--platform P] [--probe] [--json | --markdown]`: two-way, grouped; exit 0 equal, 1
different. The console script answers it itself (envguard.cli.launcher): the body imports what it runs."""

from __future__ import annotations

from envguard.cli.grammar import Arg, Command, Opt, styles

TYPE_CHECKING = False  # typing's constant would cost an import: the console script loads this module
if TYPE_CHECKING:
    from envguard.output import Style

GRAMMAR = Command(
    "diff",
    [Arg("a"), Arg("b")],
    [
        Opt(
            "--platform",
            platform=True,
            help="Platform entry to read from conda-lock.yml / pixi.lock (default: this machine's).",
        ),
        Opt(
            "--probe",
            flag=True,
            help="Run the fingerprint probe in live environments (compares RNG streams).",
        ),
        Opt(
            "--all",
            dest="show_all",
            flag=True,
            help="List every item of a long category (default: 10 of them, every kind in view).",
        ),
        *styles(),
    ],
)


def run(
    a: str, b: str, platform: str | None, probe: bool, show_all: bool, style: Style, output: str | None
) -> int:
    """Compare A with B: each a prefix, name:ENV, environment.yml, conda-lock.yml, explicit, pixi.lock or
    snapshot."""
    from envguard.diff import render
    from envguard.diff.run import diff_sources
    from envguard.errors import EXIT_DRIFT, EXIT_OK
    from envguard.output import present, warn
    from envguard.textio import gc_paused

    with gc_paused():  # the whole diff: as envguard.textio.gc_paused says
        result, warnings = diff_sources(a, b, platform=platform, probe=probe)
        for message in warnings:
            warn(message)
        present(render.views(result, show_all=show_all), style, output)
    return EXIT_OK if result.equal else EXIT_DRIFT
