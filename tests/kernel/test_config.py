"""config: pyproject.toml's [tool.envguard] read by tomllib, or tomli on Python 3.10."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envguard.config import tool_settings


def test_toml_without_tomllib_reads_every_string_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Python 3.10 (no tomllib) the pyproject is read by tomli, so a literal multi-line string is `x`."""
    monkeypatch.setitem(sys.modules, "tomllib", None)  # `import tomllib` now raises ImportError, as on 3.10
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.envguard]\nlock = '''x'''\n")
    assert tool_settings(pyproject) == {"lock": "x"}
    pyproject.write_text('[tool.envguard]\nlock = "envs/conda-lock.yml"  # where\n[other]\nlock = "no"\n')
    assert tool_settings(pyproject) == {"lock": "envs/conda-lock.yml"}
