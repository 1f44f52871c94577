"""The house keeps the shape issue 25 gave it: a small kernel, one schema_version, smoke's data typed from the
wire on, one meaning per module name, and envguard's own imports where a reader sees them (the top of the
module). Each number is a ceiling the issue set; the counts are read off the source, so a change that breaks
the shape fails here with the offending files named."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "envguard"
# Code that runs outside envguard (under the target's or the watched job's interpreter): stdlib-only, its own
# conventions, not part of envguard's import graph.
STANDALONE = ("envguard_smoke", "hook")
STANDALONE_FILES = ("fingerprint_probe.py",)


def _modules() -> list[Path]:
    return [
        p
        for p in PACKAGE.rglob("*.py")
        if not any(part in STANDALONE for part in p.parts) and p.name not in STANDALONE_FILES
    ]


def test_the_kernel_has_at_most_16_top_level_modules() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(top) <= 16, top


def test_one_schema_version() -> None:
    defined = [
        str(p.relative_to(REPO))
        for p in PACKAGE.rglob("*.py")
        if re.search(r"^SCHEMA_VERSION\s*[:=]", p.read_text(), re.MULTILINE)
    ]
    assert defined == ["envguard/model.py"], defined


def test_no_module_name_means_two_things_in_smoke() -> None:
    host = {p.name for p in (PACKAGE / "smoke").rglob("*.py") if "envguard_smoke" not in p.parts}
    inside = {p.name for p in (PACKAGE / "smoke" / "envguard_smoke").glob("*.py")}
    assert not (host & inside) - {"__init__.py"}, sorted((host & inside) - {"__init__.py"})


def test_smoke_reads_measured_data_as_typed_records() -> None:
    """The host side parses the in-environment JSON once (its wire module); downstream nothing passes raw
    dicts around or looks fields up by string."""
    host = [p for p in (PACKAGE / "smoke").rglob("*.py") if "envguard_smoke" not in p.parts]
    untyped = {str(p.relative_to(REPO)): p.read_text().count("dict[str, Any]") for p in host}
    lookups = {str(p.relative_to(REPO)): len(re.findall(r'\.get\("', p.read_text())) for p in host}
    assert sum(untyped.values()) <= 15, {k: v for k, v in untyped.items() if v}
    assert sum(lookups.values()) <= 40, {k: v for k, v in lookups.items() if v}


def _own_imports(path: Path) -> tuple[int, int]:
    """(envguard imports at module level, envguard imports inside functions) of one module."""
    tree = ast.parse(path.read_text())
    inside: set[int] = set()
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(node) for node in ast.walk(function))
    top = nested = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            own = node.level > 0 or (node.module or "").startswith("envguard")
        elif isinstance(node, ast.Import):
            own = any(alias.name.startswith("envguard") for alias in node.names)
        else:
            continue
        if own:
            nested += id(node) in inside
            top += id(node) not in inside
    return top, nested


def test_at_most_a_quarter_of_own_imports_inside_functions() -> None:
    counts = {str(p.relative_to(REPO)): _own_imports(p) for p in _modules()}
    top = sum(t for t, _ in counts.values())
    nested = sum(n for _, n in counts.values())
    worst = sorted(((n, name) for name, (_, n) in counts.items() if n), reverse=True)[:8]
    assert nested <= 0.25 * (top + nested), f"{nested} of {top + nested} inside functions; most in {worst}"


def test_no_type_ignore_on_a_rendered_console() -> None:
    offenders = [
        str(p.relative_to(REPO))
        for p in _modules()
        if re.search(r"getvalue\(\)\s*#\s*type:\s*ignore", p.read_text())
    ]
    assert not offenders, offenders
