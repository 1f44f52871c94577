"""What every command is declared with (click), and the options several commands share, declared once.

A command module declares its command with click's decorators on the function that runs it, through
`declared(name, rules=...)`: `rules` is the one table of the options that cannot go together (or that mean
nothing without another), checked in one place once click has parsed the words. Flags that share one
destination (`--json`/`--markdown`, export's `--pinned`/`--full`/`--from-history`) are alternatives: click
would silently keep the last, so giving two is a usage error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from envguard.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])

GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


@dataclass(frozen=True)
class Rule:
    """When option `when` is given (by its parameter name), every name in `needs` must be given too and none
    in `excludes`; else the usage error `message` (exit 2)."""

    when: str
    message: str
    needs: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()

    def broken(self, given: Callable[[str], bool]) -> bool:
        if not given(self.when):
            return False
        return not all(given(name) for name in self.needs) or any(given(name) for name in self.excludes)


class Declared(click.Command):
    """A click command that checks its rules once the words are parsed, and its alternative flags before."""

    def __init__(
        self,
        *args: Any,
        rules: Sequence[Rule] = (),
        alternatives: Sequence[tuple[str, ...]] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        flags = {flag for param in self.params for flag in param.opts}
        styles = (("--json", "--markdown"),) if {"--json", "--markdown"} <= flags else ()
        self.rules, self.alternatives = tuple(rules), (*alternatives, *styles)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        clash = _clash(self.alternatives, args)  # before click parses: it would keep the last of the flags
        if clash:
            raise click.UsageError(clash, ctx=ctx)
        rest = super().parse_args(ctx, args)
        for rule in self.rules:
            if rule.broken(lambda name: ctx.get_parameter_source(name) in GIVEN):
                raise click.UsageError(rule.message, ctx=ctx)
        return rest


def declared(
    name: str,
    *,
    rules: Sequence[Rule] = (),
    alternatives: Sequence[tuple[str, ...]] = (),
    passthrough: bool = False,
) -> Callable[[Callable[..., Any]], Declared]:
    """The decorator that makes a function command `name`, its docstring the help. `passthrough`: everything
    after the command's own options goes to the program it runs (`watch -- COMMAND ...`)."""
    settings = {"ignore_unknown_options": True, "allow_interspersed_args": False} if passthrough else {}
    return click.command(
        name, cls=Declared, rules=rules, alternatives=alternatives, context_settings=settings
    )


def _clash(groups: Sequence[tuple[str, ...]], words: Sequence[str]) -> str | None:
    """`A and B are alternatives; give one` where two flags of one group were given (before any `--`)."""
    given = words[: list(words).index("--")] if "--" in words else words
    for group in groups:
        found = list(dict.fromkeys(word for word in given if word in group))
        if len(found) > 1:
            return f"{found[0]} and {found[1]} are alternatives; give one"
    return None


def apply(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several click decorators as one, listed in `--help` in the order given."""

    def decorate(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return decorate


def styles(*, markdown: bool = True, output: bool = True, json_help: str = "") -> Callable[[F], F]:
    """`--json` (and `--markdown`, `-o FILE`): the command receives `style` ('human', 'json' or 'markdown')
    and `output`."""
    found = [
        click.option(
            "--json",
            "style",
            flag_value="json",
            default="human",
            help=json_help or "Print JSON (with schema_version).",
        )
    ]
    if markdown:
        found.append(
            click.option(
                "--markdown",
                "style",
                flag_value="markdown",
                default="human",
                help="Print Markdown (a PR comment, a CI summary).",
            )
        )
    if output:
        found.append(
            click.option(
                "-o",
                "--output",
                type=click.Path(dir_okay=False),
                help="Write to FILE (atomically), not stdout.",
            )
        )
    return apply(*found)


Callback = Callable[[click.Context, click.Parameter, Any], Any]


def converted(convert: Callable[[str], Any]) -> Callback:
    """An option's callback: its text (the default's too) through `convert`, which raises UsageError with the
    one line that says why it refuses it; None where the option has no value."""

    def callback(_ctx: click.Context, _param: click.Parameter, text: str | None) -> Any:
        return None if text is None else convert(text)

    return callback


def number(option: str, low: float, what: str) -> Callback:
    """An option's callback that accepts a finite number >= `low` and refuses anything else in one line."""

    def check(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < low:
            raise UsageError(f"{option} {text}: expected {what}, a finite number of at least {low:g}")
        return value

    return converted(check)


def _platform(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A conda platform, else one line naming it and the choices (exit 2)."""
    if value is None:
        return None
    from envguard.channels import check_platform  # urllib's parser: only where a platform is given

    return check_platform(value)


def platform_option(help: str) -> Callable[[F], F]:
    """`--platform P`: a conda platform (checked before anything is read)."""
    return click.option("--platform", callback=_platform, help=help)


def channel_option(purpose: str) -> Callable[[F], F]:
    """`-c/--channel CHANNEL` (repeatable, into `channels`), as conda's: `purpose` says what they are for."""
    return click.option(
        "-c",
        "--channel",
        "channels",
        multiple=True,
        metavar="CHANNEL",
        help=f"{purpose} (repeatable; before the file's own, as conda -c).",
    )


def loader_options(loader_help: str, step_default: str) -> Callable[[F], F]:
    """`--loader FILE.py:NAME` and the training step beside it (`--step-ms`, `--step-cores`,
    `--step-threads`), as smoke and doctor take them; `step_default` is what a missing --step-ms means."""
    return apply(
        click.option(
            "--loader",
            metavar="FILE.py:NAME",
            help="Your own DataLoader: NAME() returns a DataLoader or (dataset, loader_kwargs); "
            + loader_help,
        ),
        click.option(
            "--step-ms",
            metavar="MS",
            callback=number("--step-ms", 0.0, "milliseconds"),
            help=f"Your training step's time per batch, as watch reports it (default: {step_default}).",
        ),
        click.option(
            "--step-cores",
            metavar="N",
            callback=number("--step-cores", 0.0, "cores"),
            help="Cores your training step keeps busy, plus the share of it spent waiting for one, as "
            "watch reports them ('a 216 ms step using 1.9 cores'; 'using 0.3 cores, waiting for one 50% of "
            "it': 0.8; default 0: a step that waits on a GPU): the worker and thread advice weigh the "
            "loading against it.",
        ),
        click.option(
            "--step-threads",
            metavar="N",
            type=click.IntRange(min=1),
            help="Your training step's intra-op threads, as watch reports them ('the step runs torch's 2 "
            "intra-op threads'; default: torch's default in SOURCE): more threads than the cores the job "
            "gets beside the other load get the thread advice first.",
        ),
    )
