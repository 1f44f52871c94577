"""Package names: canonical_name is PEP 503's normalisation (packaging's canonicalize_name) for every name,
its shortcut for names without separators to collapse included."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from envguard.specs import canonical_name

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
