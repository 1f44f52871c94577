"""The install commands the docs give are true: the distribution name is ours (PyPI's `envguard` is an
unrelated .env validator), every documented rev exists, and README's set-up command runs on a copy of this
working tree."""

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
    assert project["scripts"] == {"envguard": "envguard.cli.launcher:main"}  # the command is unchanged


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


def setup_command() -> str:
    """README's first command under "Set up": install envguard and run its main job."""
    section = REPO.joinpath("README.md").read_text().split("## Set up\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", section, re.DOTALL)[0]


@pytest.mark.slow
def test_readme_setup_command_runs_on_a_fresh_copy(tmp_path: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    clone = tmp_path / "envguard"
    for name in listed:
        if (REPO / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            (clone / name).write_bytes((REPO / name).read_bytes())
    command = setup_command()
    done = subprocess.run(["bash", "-c", command], cwd=clone, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("OK: "), done.stdout
    shown = subprocess.run(
        [str(clone / ".venv/bin/pip"), "show", "conda-envguard"], capture_output=True, text=True, check=False
    )
    assert shown.returncode == 0 and "Name: conda-envguard" in shown.stdout
    assert not (clone / "conda-lock.yml").exists()  # the main job leaves the clone clean
