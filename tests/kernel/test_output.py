"""The one presenter: one schema_version first, the same JSON layout for every command, Markdown-safe text."""

from __future__ import annotations

import json

from envguard.model import SCHEMA_VERSION
from envguard.output import Views, document, dumps, human_bytes, md_escape, render


def test_document_puts_the_one_schema_version_first_and_drops_nested_copies() -> None:
    doc = document({"schema_version": 99, "a": 1})
    assert list(doc) == ["schema_version", "a"] and doc["schema_version"] == SCHEMA_VERSION


def test_render_by_style_and_markdown_falls_back_to_human() -> None:
    views = Views(lambda: {"x": [1, 2]}, lambda: "human\n", lambda: "md\n")
    assert json.loads(render(views, "json")) == {"schema_version": SCHEMA_VERSION, "x": [1, 2]}
    assert render(views, "markdown") == "md\n" and render(views, "human") == "human\n"
    assert render(Views(lambda: {}, lambda: "h\n"), "markdown") == "h\n"


def test_dumps_indents_two_levels_and_keeps_items_on_one_line() -> None:
    text = dumps({"a": {"b": [{"c": 1}]}, "d": []})
    assert text == '{\n  "a": {\n    "b": [{"c": 1}]\n  },\n  "d": []\n}\n'


def test_markdown_escape_keeps_cells_whole() -> None:
    assert md_escape("a|b_c*d\ne") == "a\\|b\\_c\\*d e"
    assert md_escape(None, "—") == "—"


def test_human_bytes_bounds() -> None:
    assert [human_bytes(v) for v in (0, 1023, 1024, 1536, 1 << 30, 1 << 50)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "1.5 KiB",
        "1.0 GiB",
        "1024.0 TiB",
    ]
    assert human_bytes(None) == "unknown"
