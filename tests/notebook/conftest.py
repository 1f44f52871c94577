"""A locked environment that drifted: the lock of zlib alone, and a prefix of zlib plus cpuonly (which brings
pytorch-mutex), both installed from the fixture channels."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import MakePrefix, envguard


@pytest.fixture
def drifted(make_prefix: MakePrefix, tmp_path: Path) -> tuple[Path, Path]:
    """(a prefix, the lock it drifted from)."""
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(make_prefix(["zlib"], name="locked")), "--no-probe", "-o", str(lock)) == 0
    return make_prefix(["zlib", "cpuonly"], name="drifted"), lock
