"""Hypothesis profiles for the fuzz suite: `fuzz` (the default run, a few seconds per parser) and `fuzz-long`
(tests marked `slow`, or every test with HYPOTHESIS_PROFILE=fuzz-long)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
    "derandomize": False,
}
settings.register_profile("fuzz", max_examples=120, **_COMMON)
settings.register_profile("fuzz-long", max_examples=3000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fuzz"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long fuzz runs only when asked for: `-m slow` or HYPOTHESIS_PROFILE=fuzz-long."""
    wanted = "slow" in (config.getoption("-m") or "") or os.environ.get("HYPOTHESIS_PROFILE") == "fuzz-long"
    if wanted:
        return
    skip = pytest.mark.skip(reason="long fuzz profile: run with -m slow")
    for item in items:
        if "tests/fuzz/" in item.nodeid and item.get_closest_marker("slow"):
            item.add_marker(skip)
