"""A venv given by a relative path (`envguard export .venv` in the project folder) is named after the project
folder, as an absolute path is (`.venv` is no valid conda environment name)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from tests.helpers import envguard, make_venv


def test_relative_venv_path_is_named_after_the_project_folder(tmp_path: Path) -> None:
    project = tmp_path / "myproj"
    make_venv(project / ".venv", sys.executable)
    assert envguard("export", ".venv", "-o", "environment.yml", cwd=project) == 0
    assert yaml.safe_load((project / "environment.yml").read_text())["name"] == "myproj"
