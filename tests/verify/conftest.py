"""Fixtures the verify tests share."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process's temp folder for the test: where verify builds (and --keep leaves) its prefix."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder
