"""What `%envguard` and `%%envguard_watch` give back: a result IPython displays richly (Markdown where the
command has it, JSON where it was asked as `application/json`, the human view as plain text) and a program
can read (`exit_code`, `data()`).

The magic displays its result itself, as `%pip` prints, so it shows wherever the magic stands in a cell, when
it is assigned (`r = %envguard check`) and in `ipython script.ipy`; the same result as a cell's last
expression is not shown twice (`shown_in`: the cell that displayed it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from envguard.output import Style, Views, as_printed, document, render


@dataclass(frozen=True)
class Shown:
    """One command's run: the results it presented (their views and the style asked), whatever else it
    wrote to stdout and stderr, and its exit code."""

    command: str
    exit_code: int
    results: tuple[tuple[Views, Style], ...] = ()
    stdout: str = ""
    stderr: str = ""
    shown_in: int | None = None  # the IPython execution count of the cell that displayed it

    def data(self) -> list[dict[str, Any]]:
        """Every result as its JSON document (schema_version included); a JSON document the command printed
        itself (a cached answer of `check --json`, `snapshot`) when it presented none."""
        if not self.results:
            printed = self._printed_json()
            return [printed] if printed is not None else []
        return [document(views.data()) for views, _style in self.results]

    def _printed_json(self) -> dict[str, Any] | None:
        if not self.stdout.lstrip().startswith("{"):
            return None
        try:
            parsed = json.loads(self.stdout)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    @property
    def as_json(self) -> bool:
        """The one result was asked as JSON (`--json`), presented or printed from the cache."""
        if self.results:
            return len(self.results) == 1 and self.results[0][1] == "json"
        return "--json" in self.command.split() and self._printed_json() is not None

    def text(self) -> str:
        """The plain view: each result in the style asked, then the other output and the exit code."""
        parts = [render(views, style) for views, style in self.results]
        parts += [text for text in (self.stdout, self.stderr) if text]
        if self.exit_code:
            parts.append(f"(envguard {self.command}: exit {self.exit_code})\n")
        return as_printed("".join(part if part.endswith("\n") else part + "\n" for part in parts))

    def bundle(self) -> dict[str, Any]:
        """What a frontend is given: plain text always; JSON (`application/json`) when it was asked, else
        Markdown."""
        shown: dict[str, Any] = {"text/plain": self.text().rstrip("\n")}
        document = self._repr_json_()
        if document is not None:
            shown["application/json"] = document
        else:
            shown["text/markdown"] = self._repr_markdown_()
        return shown

    def _ipython_display_(self) -> None:
        """As a cell's last expression: shown, unless the magic displayed it in this very cell."""
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        if shell is not None and self.shown_in == shell.execution_count:
            return
        display(self.bundle(), raw=True)  # type: ignore[no-untyped-call]

    def _repr_markdown_(self) -> str:
        parts = [_markdown(views, style) for views, style in self.results]
        parts += [_fenced(text, "text") for text in (self.stdout, self.stderr) if text.strip()]
        if self.exit_code:
            parts.append(f"*envguard {self.command}: exit {self.exit_code}*")
        return as_printed("\n\n".join(part.rstrip("\n") for part in parts) + "\n")

    def _repr_json_(self) -> dict[str, Any] | None:
        """Only for a single result asked as JSON (`%envguard check --json`)."""
        if self.as_json:
            return self.data()[0]
        return None

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text().rstrip("\n"))


def _markdown(views: Views, style: Style) -> str:
    if style == "json":
        return _fenced(render(views, "json"), "json")
    if views.markdown is not None:
        return views.markdown()
    return _fenced(views.human(), "text")


def _fenced(text: str, language: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"
