"""The install commands the docs give are true: the distribution name is ours (PyPI's `envguard` is an
unrelated .env validator) and every documented rev exists. README's set-up command runs on a copy of this
working tree in tests/docs (the `clone` fixture)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / ".pre-commit-hooks.yaml"]
# `pip install envguard`, `pipx install envguard[torch]`, `pip install -U "envguard==0.1"`: the other envguard
OTHER_ENVGUARD = re.compile(r"\bpipx? install\s+(?:-\S+\s+)*[\"']?envguard(?![\w-])")


def test_the_distribution_name_is_free_of_the_unrelated_pypi_envguard() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == "conda-envguard"
    assert project["scripts"] == {"envguard": "envguard.cli.app:main"}  # the command is unchanged


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_no_doc_installs_someone_elses_package(doc: Path) -> None:
    text = doc.read_text()
    assert not OTHER_ENVGUARD.search(text), OTHER_ENVGUARD.search(text)
    assert "envguard[" not in text  # extras of a name we do not own on PyPI


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_documented_rev_exists(doc: Path) -> None:
    tags = subprocess.run(["git", "tag"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for rev in re.findall(r"\brev:\s*(\S+)", doc.read_text()):
        assert rev == "COMMIT" or rev in tags, f"{doc.name}: rev {rev} is not a tag of this repository"
