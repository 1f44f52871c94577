"""The `envguard` console script: the most frequent invocations without importing click.

`envguard check` runs before every training job and in pre-commit hooks; `envguard snapshot`, `diff` and
`lock` are scripted; `envguard --help` is the first thing people type. Click's import alone costs more than
answering some of them, so their common forms are parsed here and run inside the same error boundary
(envguard.cli.boundary). Any other command, option or form goes to envguard.cli.app, unchanged.
"""

from __future__ import annotations

import os
import sys

from envguard.errors import EXIT_OK

TYPE_CHECKING = False  # typing's own constant would cost an import on every start
if TYPE_CHECKING:
    from envguard.check.fast import FastArgs
    from envguard.output import Style


def main() -> None:
    """Console-script entry point."""
    code = fast_path(sys.argv[1:])
    from envguard.cli.boundary import exit_process

    if code is not None:
        exit_process(code, finalise=False)  # a form answered here: nothing is left to finalise
    from envguard.cli.app import run

    exit_process(run())


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
    if args[:1] == ["lock"]:
        return _lock(args[1:])
    return None


class _Form:
    """A command line in the few forms the launcher answers: positionals, flags given once, options with a
    value given once (`--opt VALUE`, never `--opt=VALUE` or a value starting with `-`) and repeatable ones."""

    def __init__(
        self, positional: list[str], flags: set[str], values: dict[str, str], lists: dict[str, list[str]]
    ):
        self.positional, self.flags, self.values, self.lists = positional, flags, values, lists


def _parse(
    args: list[str],
    *,
    positional: int,
    flags: dict[str, str],
    valued: dict[str, str],
    repeated: dict[str, str] | None = None,
) -> _Form | None:
    """`args` as a _Form, or None for anything else (click then answers it, errors included)."""
    form = _Form([], set(), {}, {})
    repeated = repeated or {}
    rest = list(args)
    while rest:
        token = rest.pop(0)
        has_value = bool(rest) and not rest[0].startswith("-")
        if token in flags and flags[token] not in form.flags:
            form.flags.add(flags[token])
        elif token in valued and valued[token] not in form.values and has_value:
            form.values[valued[token]] = rest.pop(0)
        elif token in repeated and has_value:
            form.lists.setdefault(repeated[token], []).append(rest.pop(0))
        elif not token.startswith("-") and len(form.positional) < positional:
            form.positional.append(token)
        else:
            return None
    return form


_STYLE_FLAGS = {"--json": "json", "--markdown": "markdown"}


def _style(form: _Form) -> Style | None:
    if {"json", "markdown"} <= form.flags:
        return None  # click says they are alternatives
    return "json" if "json" in form.flags else "markdown" if "markdown" in form.flags else "human"


def _diff(args: list[str]) -> int | None:
    """`diff A B [--platform P] [--probe] [--all] [--json | --markdown]`; None for anything else (-o FILE,
    --help, a misspelt option: click)."""
    form = _parse(
        args,
        positional=2,
        flags={"--probe": "probe", "--all": "show_all", **_STYLE_FLAGS},
        valued={"--platform": "platform"},
    )
    if form is None or len(form.positional) != 2 or not _known_platform(form.values.get("platform")):
        return None  # click names what is missing or wrong in one line
    style = _style(form)
    if style is None:
        return None
    from envguard.cli.boundary import guarded
    from envguard.diff.run import main

    a, b = form.positional
    return guarded(
        lambda: main(
            a,
            b,
            platform=form.values.get("platform"),
            probe="probe" in form.flags,
            show_all="show_all" in form.flags,
            style=style,
            output=None,
        )
    )


def _snapshot(args: list[str]) -> int | None:
    """`snapshot [SOURCE] [--no-probe] [--platform P] [-o FILE]`; None for anything else."""
    form = _parse(
        args,
        positional=1,
        flags={"--no-probe": "no_probe"},
        valued={"--platform": "platform", "-o": "output", "--output": "output"},
    )
    if form is None or not _known_platform(form.values.get("platform")):
        return None
    from envguard.cli.boundary import guarded
    from envguard.export.snapshot import snapshot

    source = form.positional[0] if form.positional else None
    values = form.values
    return guarded(
        lambda: snapshot(source, "no_probe" in form.flags, values.get("platform"), values.get("output"))
    )


_LOCK_FORMATS = ("conda-lock", "explicit", "pixi")


def _lock(args: list[str]) -> int | None:
    """`lock [SOURCE] [-f FILE] [--platform P ...] [--cuda V | --no-cuda] [--no-probe] [--format F]
    [--include-local] [-o FILE]`; None for anything else."""
    form = _parse(
        args,
        positional=1,
        flags={"--no-cuda": "no_cuda", "--no-probe": "no_probe", "--include-local": "include_local"},
        valued={"-f": "envfile", "--file": "envfile", "--cuda": "cuda", "--format": "fmt", "-o": "output"}
        | {"--output": "output"},
        repeated={"--platform": "platforms"},
    )
    if form is None:
        return None
    platforms = tuple(form.lists.get("platforms", ()))
    values = form.values
    envfile, fmt = values.get("envfile"), values.get("fmt", "conda-lock")
    if not all(_known_platform(p) for p in platforms) or fmt not in _LOCK_FORMATS:
        return None
    if envfile is not None and os.path.isdir(envfile):
        return None  # click's own message for a folder given as -f
    from envguard.cli.boundary import guarded
    from envguard.lock.run import LockOptions, main

    options = LockOptions(
        form.positional[0] if form.positional else None,
        envfile,
        platforms,
        values.get("cuda"),
        "no_cuda" in form.flags,
        "no_probe" in form.flags,
        fmt,
        values.get("output"),
        "include_local" in form.flags,
    )
    return guarded(lambda: main(options))


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
