"""The `envguard` console script: the most frequent invocations without importing click.

`envguard check` runs before every training job and in pre-commit hooks; `envguard snapshot` and `envguard
diff` are scripted; `envguard --help` is the first thing people type. Click's import alone costs more than
answering them, so their common forms are parsed here and run inside the same error boundary
(envguard.cli.boundary). Any other command, option or form goes to envguard.cli.app, unchanged.
"""

from __future__ import annotations

import sys

from envguard.errors import EXIT_OK

TYPE_CHECKING = False  # typing's own constant would cost an import on every start
if TYPE_CHECKING:
    from envguard.check.fast import FastArgs
    from envguard.output import Style


def main() -> None:
    """Console-script entry point."""
    code = fast_path(sys.argv[1:])
    if code is None:
        from envguard.cli.app import run

        code = run()
    if "rattler" in sys.modules:  # its runtime can crash CPython's finalisation: see boundary.exit_process
        from envguard.cli.boundary import exit_process

        exit_process(code)
    sys.stdout.flush()
    sys.exit(code)


def fast_path(args: list[str]) -> int | None:
    """The exit code of a form answered here, or None to hand the arguments to click."""
    if args in ([], ["--help"], ["-h"]):
        from envguard.cli.commandlist import help_text

        sys.stdout.write(help_text())
        return EXIT_OK
    if args == ["--version"]:
        from envguard.cli.commandlist import version_text

        sys.stdout.write(version_text())
        return EXIT_OK
    if args[:1] == ["check"]:
        return _check(args[1:])
    if args[:1] == ["snapshot"]:
        return _snapshot(args[1:])
    if args[:1] == ["diff"]:
        return _diff(args[1:])
    return None


_DIFF_FLAGS = {"--probe": "probe", "--all": "show_all", "--json": "json", "--markdown": "markdown"}


def _diff(args: list[str]) -> int | None:
    """`diff A B [--platform P] [--probe] [--all] [--json | --markdown]`; None for anything else (-o FILE,
    --help, a misspelt option: click)."""
    sources: list[str] = []
    flags: set[str] = set()
    platform = None
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if token in _DIFF_FLAGS and _DIFF_FLAGS[token] not in flags:
            flags.add(_DIFF_FLAGS[token])
        elif token == "--platform" and platform is None and rest and not rest[0].startswith("-"):
            platform = rest.pop(0)
        elif not token.startswith("-") and len(sources) < 2:
            sources.append(token)
        else:
            return None
    if len(sources) != 2 or {"json", "markdown"} <= flags or not _known_platform(platform):
        return None  # click names what is missing or wrong in one line
    from envguard.cli.boundary import guarded
    from envguard.diff.run import main

    style: Style = "json" if "json" in flags else "markdown" if "markdown" in flags else "human"
    a, b = sources
    return guarded(
        lambda: main(
            a,
            b,
            platform=platform,
            probe="probe" in flags,
            show_all="show_all" in flags,
            style=style,
            output=None,
        )
    )


def _snapshot(args: list[str]) -> int | None:
    """`snapshot [SOURCE] [--no-probe] [--platform P] [-o FILE]`; None for anything else."""
    source = platform = output = None
    no_probe = False
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if token == "--no-probe" and not no_probe:
            no_probe = True
        elif token == "--platform" and platform is None and rest and not rest[0].startswith("-"):
            platform = rest.pop(0)
        elif token in ("-o", "--output") and output is None and rest and not rest[0].startswith("-"):
            output = rest.pop(0)
        elif not token.startswith("-") and source is None:
            source = token
        else:
            return None
    if not _known_platform(platform):
        return None
    from envguard.cli.boundary import guarded
    from envguard.export.snapshot import snapshot

    return guarded(lambda: snapshot(source, no_probe, platform, output))


def _known_platform(platform: str | None) -> bool:
    if platform is None:
        return True
    from envguard.channels import KNOWN_SUBDIRS

    return platform in KNOWN_SUBDIRS and platform != "noarch"


def _check(args: list[str]) -> int | None:
    from envguard.check.fast import parse_args, try_cached

    parsed = parse_args(args)
    if parsed is None or not _known_platform(parsed.platform):
        return None  # click's --platform callback names an unknown platform in one line
    code = try_cached(parsed)
    if code is not None:
        return code
    return _full_check(parsed)


def _full_check(parsed: FastArgs) -> int:
    """The full check inside the same error boundary as envguard.cli.app.run (one line and an exit code)."""
    from envguard.check.run import CheckOptions, main
    from envguard.cli.boundary import guarded

    options = CheckOptions(
        parsed.source,
        parsed.lock,
        parsed.envfile,
        parsed.platform,
        style=parsed.style,
        cache_checked=True,
        taken=parsed.taken,
    )
    return guarded(lambda: main(options))
