"""The clean tests' world: a real cache-and-environments layout (tests/clean/world.py), one per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clean.world import World, world_at


@pytest.fixture
def world(tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with world_at(tmp_path, channels, monkeypatch) as built:
        yield built
