"""conda MatchSpec matching goes through rattler (conda's semantics), not hand-written globs and regexes."""

from __future__ import annotations

import pytest

from envguard.model import Package
from envguard.specs import conda_matches

TORCH = Package("conda", "pytorch", "2.1.0", "py3.11_cuda11.8_cudnn8.7.0_0", 0, "pytorch", "linux-64")


@pytest.mark.parametrize(
    ("spec", "matches"),
    [
        ("pytorch", True),
        ("pytorch=2.1", True),  # conda's `=2.1` is `2.1.*`
        ("pytorch==2.0", False),  # and `==2.0` is exactly 2.0 (`==2.1` matches 2.1.0: conda pads with zeros)
        ("pytorch==2.1", True),
        ("pytorch 2.1.*", True),
        ("pytorch >=2.0,<2.2", True),
        ("pytorch=2.1=*cuda11.8*", True),
        ("pytorch=2.1=*cpu*", False),
        ("pytorch[build_number='>=1']", False),
        ("pytorch[build_number='0']", True),
        ("pytorch::pytorch", True),
        ("conda-forge::pytorch", False),
        ("pytorch[subdir=osx-arm64]", False),
        ("pytorch 2.1.0|2.2.0", True),
        ("numpy", False),
    ],
)
def test_conda_specs(spec: str, matches: bool) -> None:
    assert conda_matches(spec, TORCH) is matches


def test_a_source_without_build_strings_matches_only_an_open_build() -> None:
    locked = Package("conda", "zlib", "1.3.1")
    assert conda_matches("zlib=1.3", locked) and conda_matches("zlib=1.3.1=*", locked)
    assert not conda_matches("zlib=1.3=*", locked)  # name=version=build pins the version exactly
    assert not conda_matches("zlib=1.3=h4ab18f5_1", locked)
    assert not conda_matches("zlib>=1.3", Package("conda", "zlib", "not a version!", "0"))
