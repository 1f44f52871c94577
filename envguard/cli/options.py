"""Options several commands share, declared once: the output style (--json / --markdown) and -o FILE."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from envguard.channels import check_platform
from envguard.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])
BOTH_STYLES = "--json and --markdown are alternatives; give one"


def output_style(*, markdown: bool = True, output: bool = True) -> Callable[[F], F]:
    """Add `--json` (and `--markdown`, `-o FILE`) to a command; it receives `style` ('human', 'json' or
    'markdown') and `output` instead of the flags."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, as_json: bool = False, as_markdown: bool = False, **kwargs: Any) -> Any:
            if as_json and as_markdown:
                raise UsageError(BOTH_STYLES)
            style = "json" if as_json else "markdown" if as_markdown else "human"
            return function(*args, style=style, **kwargs)

        decorated: Any = wrapper
        if output:
            decorated = click.option(
                "-o",
                "--output",
                type=click.Path(dir_okay=False),
                help="Write to FILE (atomically), not stdout.",
            )(decorated)
        if markdown:
            decorated = click.option(
                "--markdown", "as_markdown", is_flag=True, help="Print Markdown (a PR comment, a CI summary)."
            )(decorated)
        decorated = click.option("--json", "as_json", is_flag=True, help="Print JSON (with schema_version).")(
            decorated
        )
        return decorated  # type: ignore[no-any-return]

    return decorate


def valid_platform(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A `--platform` callback: a conda platform, else one line naming it and the choices (exit 2)."""
    if value is None:
        return None

    return check_platform(value)
