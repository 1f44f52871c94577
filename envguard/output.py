"""How results leave envguard: the one presenter (JSON with one schema_version, human, Markdown), writing to
-o FILE or stdout, warnings to stderr, and the small formatting helpers every view shares."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from envguard.atomic import write_output
from envguard.channels import scrub
from envguard.model import SCHEMA_VERSION


def dumps(data: Any) -> str:
    """Deterministic, diff-friendly JSON: the top two levels indented, deeper values (one package, one
    finding) on a single line each. Built from the C encoder, so a 300-package snapshot serialises in about a
    millisecond."""
    return _pretty(data, 0) + "\n"


def _pretty(value: Any, level: int) -> str:
    pad = "  " * (level + 1)
    if level < 2 and isinstance(value, dict) and value:
        items = (
            f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, level + 1)}"
            for k, v in value.items()
        )
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if level < 2 and isinstance(value, list | tuple) and value:
        return "[\n" + ",\n".join(pad + _pretty(v, level + 1) for v in value) + "\n" + "  " * level + "]"
    return json.dumps(value, ensure_ascii=False)


def emit(text: str, output: str | None) -> None:
    """Write `text` to `output` (atomically onto a file, straight through onto a FIFO or device; see
    envguard.atomic.write_output), or to stdout when it is None or '-'."""
    text = scrub(text)  # no credential from any input leaves envguard (S2/S3)
    if output and output != "-":
        write_output(Path(output), text.encode("utf-8"))
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def warn(message: str) -> None:
    sys.stderr.write(f"envguard: warning: {scrub(message)}\n")


def human_bytes(value: float | None) -> str:
    """`1.5 GiB`-style sizes for evidence strings."""
    if value is None:
        return "unknown"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


# --- the one presenter
# ----------------------------------------------------------------------------------------

Style = Literal["human", "json", "markdown"]


@dataclass(frozen=True)
class Views:
    """How one command's result is shown: its JSON body, its human view and (where it fits) Markdown."""

    data: Callable[[], Mapping[str, Any]]
    human: Callable[[], str]
    markdown: Callable[[], str] | None = None


def document(data: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON document: `schema_version` first (the one version, envguard.model.SCHEMA_VERSION), then the
    fields."""
    return {"schema_version": SCHEMA_VERSION, **{k: v for k, v in data.items() if k != "schema_version"}}


def render(views: Views, style: Style) -> str:
    """The result as text in `style` (Markdown falls back to the human view where a command has none)."""
    if style == "json":
        return dumps(document(views.data()))
    if style == "markdown" and views.markdown is not None:
        return views.markdown()
    return views.human()


def present(views: Views, style: Style, output: str | None) -> None:
    """Render and write to `output` (atomically) or stdout."""
    emit(render(views, style), output)


def md_escape(text: str | None, empty: str = "") -> str:
    """Text safe inside Markdown (table cells included): no table breaks, no emphasis, one line."""
    if not text:
        return empty
    return (
        text.replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("*", "\\*")
        .replace("_", "\\_")
        .replace("\n", " ")
    )
