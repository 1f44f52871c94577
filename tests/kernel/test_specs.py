"""envguard.specs: conda's version order, and package names: canonical_name is PEP 503's normalisation
(packaging's canonicalize_name) for every name, its shortcut for names without separators to collapse
included."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from envguard.specs import canonical_name, version_less

NAMES = st.text(alphabet="aZ9-_.é", min_size=0, max_size=12)


@given(NAMES)
def test_canonical_name_is_pep503(name: str) -> None:
    assert canonical_name(name) == canonicalize_name(name)


def test_canonical_name_examples() -> None:
    cases = {"Typing_Extensions": "typing-extensions", "a--b": "a-b", "zope.interface": "zope-interface"}
    assert {name: canonical_name(name) for name in [*cases, "numpy", "PyYAML", "-a-"]} == {
        **cases,
        "numpy": "numpy",
        "PyYAML": "pyyaml",
        "-a-": "-a-",
    }


@pytest.mark.parametrize(
    ("a", "b", "less"),
    [
        ("12.4", "12.4.0", False),
        ("2.28", "2.17", False),
        ("1.9", "1.10", True),
        ("1.0a1", "1.0", True),
        ("1.0", "1.0a1", False),
        ("x!y", "1.0", True),
    ],
)
def test_version_order_is_condas(a: str, b: str, less: bool) -> None:
    assert version_less(a, b) is less
