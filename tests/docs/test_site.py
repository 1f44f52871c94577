"""The docs site: README.md short enough to read in ten minutes, every command documented on a page and
listed in the README as `envguard --help` lists it, and `mkdocs build --strict` (broken links and anchors fail
it) with its CLI reference generated from the click group."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from envguard.cli.app import cli
from tests.helpers import REPO

README = REPO / "README.md"
PAGES = sorted((REPO / "docs").rglob("*.md"))
README_ROW = re.compile(r"^\| `envguard (\w+)` \|.*\| \[[^]]+\]\((docs/[\w.-]+\.md)\) \|$", re.MULTILINE)
SECTION = re.compile(r"^## `envguard (\w+)`$", re.MULTILINE)


def commands() -> set[str]:
    """What `envguard --help` lists: the click group's commands."""
    return set(cli.list_commands(click.Context(cli)))


def test_the_readme_reads_in_ten_minutes() -> None:
    assert len(README.read_text().splitlines()) <= 250


def test_the_readme_lists_every_command_with_its_page() -> None:
    rows = dict(README_ROW.findall(README.read_text()))
    assert set(rows) == commands(), "README's command table differs from `envguard --help`"
    for name, page in rows.items():
        assert name in SECTION.findall((REPO / page).read_text()), f"{page} has no section for {name}"


def test_every_command_has_one_section_in_the_docs() -> None:
    found = [name for page in PAGES for name in SECTION.findall(page.read_text())]
    assert sorted(found) == sorted(commands()), "the docs' `## envguard NAME` sections differ from --help"


def test_the_cli_reference_is_generated_from_the_click_group() -> None:
    text = (REPO / "docs" / "cli.md").read_text()
    assert "::: mkdocs-click" in text and ":module: envguard.cli.app" in text and ":command: cli" in text
    assert not SECTION.search(text)  # nothing hand-copied


def test_every_page_is_in_the_nav() -> None:
    nav = (REPO / "mkdocs.yml").read_text()
    missing = [p.name for p in PAGES if f" {p.relative_to(REPO / 'docs').as_posix()}\n" not in nav]
    assert not missing, f"mkdocs.yml's nav lacks {missing}"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (dev extra)")
def test_mkdocs_builds_strict_with_every_command(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    reference = (site / "cli" / "index.html").read_text()
    ids = set(re.findall(r'id="envguard-(\w+)"', reference))
    assert commands() <= ids, f"the CLI reference lacks {commands() - ids}"
