"""check's report (pure): this machine's virtual packages against the target's are notes, judged in conda's
version order."""

from __future__ import annotations

import pytest

from envguard.check.report import virtual_findings
from envguard.model import VirtualPackage, make_environment


@pytest.mark.parametrize(
    ("mine", "wanted", "note"),
    [("12.4", "12.4.0", False), ("12.4.0", "12.4", False), ("12.2", "12.4", True), ("12.10", "12.9", False)],
)
def test_virtual_package_versions_compare_as_conda_versions(mine: str, wanted: str, note: bool) -> None:
    live = make_environment(kind="prefix", virtual_packages=(VirtualPackage("__cuda", mine),))
    target = make_environment(kind="conda-lock", virtual_packages=(VirtualPackage("__cuda", wanted),))
    assert bool(virtual_findings(live, target, "the lock")) is note
