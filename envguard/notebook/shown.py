"""What `%envguard` and `%%envguard_watch` give back: a result IPython displays richly (Markdown where the
command has it, JSON where it was asked, the human view as plain text) and a program can read (`exit_code`,
`data()`)."""

from __future__ import annotations

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

    def data(self) -> list[dict[str, Any]]:
        """Every result as its JSON document (schema_version included)."""
        return [document(views.data()) for views, _style in self.results]

    def text(self) -> str:
        """The plain view: each result in the style asked, then the other output and the exit code."""
        parts = [render(views, style) for views, style in self.results]
        parts += [text for text in (self.stdout, self.stderr) if text]
        if self.exit_code:
            parts.append(f"(envguard {self.command}: exit {self.exit_code})\n")
        return as_printed("".join(part if part.endswith("\n") else part + "\n" for part in parts))

    def _repr_markdown_(self) -> str:
        parts = [_markdown(views, style) for views, style in self.results]
        parts += [_fenced(text, "text") for text in (self.stdout, self.stderr) if text.strip()]
        if self.exit_code:
            parts.append(f"*envguard {self.command}: exit {self.exit_code}*")
        return as_printed("\n\n".join(part.rstrip("\n") for part in parts) + "\n")

    def _repr_json_(self) -> dict[str, Any] | None:
        """Only for a single result asked as JSON (`%envguard check --json`)."""
        if len(self.results) == 1 and self.results[0][1] == "json":
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
