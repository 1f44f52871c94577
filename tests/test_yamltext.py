"""Hand-written YAML scalars read back as the same string, and stay plain where conda writes them plain."""

from __future__ import annotations

import yaml
from hypothesis import given
from hypothesis import strategies as st

from envguard.yamltext import scalar


@given(st.text(st.characters(exclude_categories=("Cs",)), max_size=40))
def test_property_any_string_round_trips(text: str) -> None:
    assert yaml.safe_load(f"- {scalar(text)}\n") == [text]
    assert yaml.safe_load(f"key: {scalar(text)}\n") == {"key": text}


def test_conda_style_specs_stay_plain() -> None:
    for spec in ("numpy=1.26.4=py311h64a7726_0", "numpy[version='<2']", "conda-forge::numpy >=1.21,<2",
                 "-e .", "name @ git+https://h/r@abc", "file:///srv/channel", "pytorch=2.1.0=*cuda11.8*"):  # fmt: skip
        assert scalar(spec) == spec
    for special in ("yes", "1.0", "null", "~", "2024-01-01", "a: b", "#x", "@x", "- x", "=", ""):
        assert scalar(special) != special
