"""Every command's arguments and options, declared once, as data.

A command module declares its `GRAMMAR` (a Command of Args and Opts) and a plain function `run(**values) ->
int`. click's command is built from the declaration (`to_click`: help, usage errors, every form click
accepts), and the console script parses the common forms of the commands it answers itself with the very
same declaration (`parse`) before click is even imported: `envguard check` runs before every training job,
and click's import alone costs about as much as answering an unchanged check. `parse` answers only what it is
sure click would accept with the same values; anything else (`--opt=value`, `--help`, a bad value, a
missing argument) is None and goes to click, errors included.

This module is on the check fast path: standard library `os` and `pathlib` only, no dataclasses, no click.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from envguard.errors import UsageError

TYPE_CHECKING = False  # typing's constant (and collections.abc) would cost imports on the fast path
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

BOTH_STYLES = "--json and --markdown are alternatives; give one"


class Arg:
    """A positional argument: one value (required or not), or every remaining one (`many`)."""

    __slots__ = ("many", "metavar", "name", "raw", "required")

    def __init__(
        self, name: str, *, required: bool = True, many: bool = False, metavar: str = "", raw: bool = False
    ) -> None:
        self.name, self.required, self.many, self.metavar, self.raw = name, required, many, metavar, raw


class Opt:
    """An option. `flag`: present or not (or `flag_value` for one of several flags sharing `dest`); else it
    takes a value (`many`: repeatable, collected in order). A value is a `kind` ("str", "int", "float" or
    "path"), optionally one of `choices`, at least `minimum`, or a conda platform (`platform`). A path may
    have to exist, be or not be a folder, and reach the command as a Path (`as_path`). `check`, where given,
    turns the text into the value or raises UsageError with the one line that says why (the default too)."""

    __slots__ = (
        "as_path",
        "check",
        "choices",
        "default",
        "dest",
        "dir_okay",
        "exists",
        "file_okay",
        "flag",
        "flag_value",
        "flags",
        "help",
        "kind",
        "many",
        "metavar",
        "minimum",
        "platform",
        "show_default",
    )

    def __init__(
        self,
        *flags: str,
        dest: str = "",
        help: str = "",
        flag: bool = False,
        flag_value: str | None = None,
        many: bool = False,
        kind: str = "str",
        choices: tuple[str, ...] = (),
        minimum: float | None = None,
        platform: bool = False,
        default: Any = None,
        show_default: bool = False,
        metavar: str = "",
        exists: bool = False,
        file_okay: bool = True,
        dir_okay: bool = True,
        as_path: bool = False,
        check: Callable[[str], Any] | None = None,
    ) -> None:
        self.flags = flags
        self.dest = dest or max(flags, key=len).lstrip("-").replace("-", "_")
        self.help, self.flag, self.flag_value, self.many = (
            help,
            flag or flag_value is not None,
            flag_value,
            many,
        )
        self.kind, self.choices, self.minimum, self.platform = kind, choices, minimum, platform
        self.default, self.show_default, self.metavar = default, show_default, metavar
        self.exists, self.file_okay, self.dir_okay, self.as_path = exists, file_okay, dir_okay, as_path
        self.check = check


def styles(*, markdown: bool = True, output: bool = True, json_help: str = "") -> tuple[Opt, ...]:
    """`--json` (and `--markdown`, `-o FILE`): the command receives `style` ('human', 'json' or 'markdown')
    instead of the two flags, and `output`."""
    found = [Opt("--json", dest="as_json", flag=True, help=json_help or "Print JSON (with schema_version).")]
    if markdown:
        found.append(
            Opt(
                "--markdown",
                dest="as_markdown",
                flag=True,
                help="Print Markdown (a PR comment, a CI summary).",
            )
        )
    if output:
        found.append(
            Opt("-o", "--output", kind="path", dir_okay=False, help="Write to FILE (atomically), not stdout.")
        )
    return tuple(found)


def number(option: str, low: float, what: str) -> Callable[[str], float]:
    """An Opt's check that accepts a finite number >= `low` and refuses anything else in one line (exit 2)."""

    def check(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < low:
            raise UsageError(f"{option} {text}: expected {what}, a finite number of at least {low:g}")
        return value

    return check


def channel_option(purpose: str) -> Opt:
    """`-c/--channel CHANNEL` (repeatable, into `channels`), as conda's: `purpose` says what the channels are
    for."""
    return Opt(
        "-c",
        "--channel",
        dest="channels",
        many=True,
        metavar="CHANNEL",
        help=f"{purpose} (repeatable; before the file's own, as conda -c).",
    )


class Command:
    """One command's grammar: its name, positional arguments and options (in the order `--help` lists
    them), the groups of flags that exclude each other (flags sharing one destination, which click would
    silently let the last one win), and `passthrough` for a command that hands everything after its own
    options to the program it runs (`watch -- COMMAND ...`)."""

    __slots__ = ("args", "exclusive", "name", "options", "passthrough")

    def __init__(
        self,
        name: str,
        args: Sequence[Arg] = (),
        options: Sequence[Opt] = (),
        *,
        exclusive: Sequence[tuple[str, ...]] = (),
        passthrough: bool = False,
    ) -> None:
        self.name, self.args, self.options = name, tuple(args), tuple(options)
        self.exclusive, self.passthrough = tuple(exclusive), passthrough


# --- the console script's parser --------------------------------------------------------------------------


def parse(command: Command, words: Sequence[str]) -> dict[str, Any] | None:
    """The values click would hand the command for `words`, or None where click must answer (an error, help,
    or a form this parser does not take: `--opt=value`, bundled short flags, `--`, a value starting with
    `-`). Values are converted and checked as click would; `style` replaces --json/--markdown."""
    if command.passthrough:
        return None
    by_flag = {flag: opt for opt in command.options for flag in opt.flags}
    values: dict[str, Any] = {}
    given: set[str] = set()
    positional: list[str] = []
    rest = list(words)
    while rest:
        token = rest.pop(0)
        opt = by_flag.get(token)
        if opt is None:
            if token.startswith("-"):
                return None
            positional.append(token)
            continue
        if opt.flag:
            if opt.dest in given:
                return None  # click takes the last of repeated flags; too rare to mirror here
            given.add(opt.dest)
            values[opt.dest] = opt.flag_value if opt.flag_value is not None else True
            continue
        if not rest or rest[0].startswith("-") or (opt.dest in given and not opt.many):
            return None
        value = _converted(opt, rest.pop(0))
        if value is None:
            return None
        given.add(opt.dest)
        if opt.many:
            values.setdefault(opt.dest, []).append(value)
        else:
            values[opt.dest] = value
    args = _arguments(command, positional)
    if args is None or _clash(command, words) or {"as_json", "as_markdown"} <= given:
        return None
    result = {
        **_defaults(command),
        **args,
        **{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()},
    }
    return _with_style(command, result)


def _converted(opt: Opt, text: str) -> Any:
    """`text` as the option's value, or None where click would refuse it (click then says why)."""
    if opt.check is not None:
        try:
            return opt.check(text)
        except UsageError:
            return None
    if opt.choices:
        return text if text in opt.choices else None
    if opt.platform:
        from envguard.channels import KNOWN_SUBDIRS  # the click path validates it too; import only when given

        return text if text in KNOWN_SUBDIRS and text != "noarch" else None
    if opt.kind in ("int", "float"):
        try:
            number: float = int(text) if opt.kind == "int" else float(text)
        except ValueError:
            return None
        return number if opt.minimum is None or number >= opt.minimum else None
    if opt.kind == "path":
        return _path(opt, text)
    return text


def _path(opt: Opt, text: str) -> Any:
    """click.Path's checks: exists, a file or a folder as allowed, readable."""
    if not os.path.exists(text):
        return None if opt.exists else (Path(text) if opt.as_path else text)
    folder = os.path.isdir(text)
    if (folder and not opt.dir_okay) or (not folder and not opt.file_okay) or not os.access(text, os.R_OK):
        return None
    return Path(text) if opt.as_path else text


def _arguments(command: Command, positional: list[str]) -> dict[str, Any] | None:
    values: dict[str, Any] = {}
    for arg in command.args:
        if arg.many:
            values[arg.name], positional = tuple(positional), []
        elif positional:
            values[arg.name] = positional.pop(0)
        elif arg.required:
            return None
        else:
            values[arg.name] = None
    return None if positional else values


def _clash(command: Command, words: Sequence[str]) -> str | None:
    """`A and B are alternatives; give one` where two flags of an exclusive group were given."""
    given = words[: list(words).index("--")] if "--" in words else words
    for group in command.exclusive:
        found = list(dict.fromkeys(w for w in given if w in group))
        if len(found) > 1:
            return f"{found[0]} and {found[1]} are alternatives; give one"
    return None


def _defaults(command: Command) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for opt in command.options:
        if opt.flag and opt.flag_value is None:
            found[opt.dest] = False
        elif opt.many:
            found[opt.dest] = ()
        elif opt.check is not None and opt.default is not None:
            found.setdefault(opt.dest, opt.check(str(opt.default)))
        else:
            found.setdefault(opt.dest, opt.default)
    return found


def _with_style(command: Command, values: dict[str, Any]) -> dict[str, Any]:
    """--json/--markdown as `style`, for a command that declares them."""
    if "as_json" not in values:
        return values
    as_json, as_markdown = values.pop("as_json"), values.pop("as_markdown", False)
    values["style"] = "json" if as_json else "markdown" if as_markdown else "human"
    return values


# --- click, built from the declaration ----------------------------------------------------------------------


def to_click(command: Command, run: Callable[..., Any]) -> Any:
    """The click command for `command`, calling `run(**values)` (its docstring is the command's help)."""
    import functools

    import click

    class Declared(click.Command):
        def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
            clash = _clash(command, args)  # before click parses: it would keep the last of the flags
            if clash:
                raise click.UsageError(clash, ctx=ctx)
            return super().parse_args(ctx, args)

    def invoke(**values: Any) -> Any:
        if values.get("as_json") and values.get("as_markdown"):
            raise UsageError(BOTH_STYLES)
        return run(**_with_style(command, values))

    callback = functools.update_wrapper(invoke, run)
    params = [_click_argument(click, arg) for arg in command.args]
    params += [_click_option(click, opt) for opt in command.options]
    settings = (
        {"ignore_unknown_options": True, "allow_interspersed_args": False} if command.passthrough else {}
    )
    return Declared(
        command.name, callback=callback, params=params, help=run.__doc__, context_settings=settings
    )


def _click_argument(click: Any, arg: Arg) -> Any:
    extra: dict[str, Any] = {"metavar": arg.metavar} if arg.metavar else {}
    if arg.raw:
        extra["type"] = click.UNPROCESSED
    return click.Argument(
        [arg.name], required=arg.required and not arg.many, nargs=-1 if arg.many else 1, **extra
    )


def _click_option(click: Any, opt: Opt) -> Any:
    extra: dict[str, Any] = {"help": opt.help}
    if opt.metavar:
        extra["metavar"] = opt.metavar
    if opt.show_default:
        extra["show_default"] = True
    if opt.flag:
        if opt.flag_value is not None:
            return click.Option([*opt.flags, opt.dest], flag_value=opt.flag_value, **extra)
        return click.Option([*opt.flags, opt.dest], is_flag=True, **extra)
    if opt.default is not None:
        extra["default"] = opt.default
    if opt.platform:
        extra["callback"] = _valid_platform
    if opt.check is not None:
        check = opt.check
        extra["callback"] = lambda _ctx, _param, value: None if value is None else check(value)
    return click.Option([*opt.flags, opt.dest], type=_click_type(click, opt), multiple=opt.many, **extra)


def _click_type(click: Any, opt: Opt) -> Any:
    if opt.choices:
        return click.Choice(list(opt.choices))
    if opt.kind == "int":
        return click.IntRange(min=int(opt.minimum)) if opt.minimum is not None else int
    if opt.kind == "float":
        return click.FloatRange(min=opt.minimum) if opt.minimum is not None else float
    if opt.kind == "path":
        return click.Path(
            exists=opt.exists,
            file_okay=opt.file_okay,
            dir_okay=opt.dir_okay,
            path_type=Path if opt.as_path else None,
        )
    return None


def _valid_platform(_ctx: Any, _param: Any, value: str | None) -> str | None:
    """A `--platform` callback: a conda platform, else one line naming it and the choices (exit 2)."""
    if value is None:
        return None
    from envguard.channels import check_platform

    return check_platform(value)
