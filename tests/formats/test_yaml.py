"""Hand-written YAML scalars read back as the same string, and stay plain where conda writes them plain."""

from __future__ import annotations

import yaml
from hypothesis import given
from hypothesis import strategies as st

from envguard.formats.yaml import scalar


@given(st.text(st.characters(exclude_categories=("Cs",)), max_size=40))
def test_property_any_string_round_trips(text: str) -> None:
    assert yaml.safe_load(f"- {scalar(text)}\n") == [text]
    assert yaml.safe_load(f"key: {scalar(text)}\n") == {"key": text}


def test_conda_style_specs_stay_plain() -> None:
    for spec in (
        "numpy=1.26.4=py311h64a7726_0",
        "numpy[version='<2']",
        "conda-forge::numpy >=1.21,<2",
        "-e .",
        "name @ git+https://h/r@abc",
        "file:///srv/channel",
        "pytorch=2.1.0=*cuda11.8*",
    ):
        assert scalar(spec) == spec
    for special in ("yes", "1.0", "null", "~", "2024-01-01", "a: b", "#x", "@x", "- x", "=", ""):
        assert scalar(special) != special


def test_dump_matches_pyyaml_on_real_conda_lock_files(shared) -> None:
    """The hand-written block emitter lays out real conda-lock.yml files byte for byte as PyYAML does."""
    import yaml

    from envguard.formats.yaml import dump

    files = sorted((shared / "corpus" / "conda_lock").glob("*.yml"))
    files.append(shared / "reference" / "conda-outputs" / "conda-lock" / "conda-lock_no-mamba.yml")
    for path in files:
        document = yaml.safe_load(path.read_text())
        expected = yaml.dump(
            document, Dumper=yaml.SafeDumper, sort_keys=False, default_flow_style=False, width=10_000
        )
        assert dump(document) == expected, path.name


_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=12))
_doc = st.recursive(
    _leaf,
    lambda children: st.one_of(
        st.lists(
            st.one_of(_leaf, st.dictionaries(st.text(min_size=1, max_size=6), children, max_size=3)),
            max_size=3,
        ),
        st.dictionaries(st.text(min_size=1, max_size=6), children, max_size=3),
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.text(min_size=1, max_size=8), _doc, min_size=1, max_size=4))
def test_property_dump_reads_back(document) -> None:
    import yaml

    from envguard.formats.yaml import dump

    assert yaml.safe_load(dump(document)) == document


def test_printable_is_pyyamls_set_for_every_code_point() -> None:
    """The hand-written ranges agree with PyYAML's own NON_PRINTABLE pattern on all 1,114,112 code points."""
    from yaml.reader import Reader

    from envguard.formats.yaml import printable

    wrong = [c for c in map(chr, range(0x110000)) if printable(c) == bool(Reader.NON_PRINTABLE.match(c))]
    assert wrong == []
