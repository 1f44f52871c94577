"""The smoke tests' environment: a real prefix with python and numpy (smoke runs torch from the test's own
interpreter when the prefix has none)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import MakePrefix


@pytest.fixture
def prefix(make_prefix: MakePrefix) -> Path:
    return make_prefix(["python=3.11", "numpy=1.26"])
