"""Hand-written YAML scalars read back as the same string, and stay plain where conda writes them plain."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
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


def _pyyaml_type(text: str) -> str | None:
    from yaml.nodes import ScalarNode
    from yaml.resolver import Resolver

    tag = Resolver().resolve(ScalarNode, text, (True, False))
    return None if tag == "tag:yaml.org,2002:str" else tag.rsplit(":", 1)[1]


_YAMLISH = st.text(st.sampled_from("0123456789_.:+-eExXbBoO aAfFiInNlLsStTuUyYZ<=~!&*\t١"), max_size=16)


_DATEISH = st.from_regex(
    r"[0-9]{3,5}-[0-9]{1,3}-[0-9]{1,3}([Tt \t]{0,2}[0-9]{1,3}:[0-9]{1,2}:[0-9]{1,3}(\.[0-9]*)?"
    r"[ \t]?(Z|[-+][0-9]{1,3}(:[0-9]{1,2})?)?)?",
    fullmatch=True,
)


@settings(max_examples=600)  # hypothesis draws the text: ~3 ms an example
@given(st.one_of(_YAMLISH, _DATEISH, st.text(max_size=12)))
def test_property_implicit_types_are_pyyamls(text: str) -> None:
    """The hand-written YAML 1.1 resolver gives PyYAML's SafeLoader type for every plain scalar text."""
    from envguard.formats.yaml import implicit_type

    text = text.strip(" \t")
    assert implicit_type(text) == _pyyaml_type(text), repr(text)


def test_implicit_types_on_the_edges() -> None:
    from envguard.formats.yaml import implicit_type

    cases = (
        "yes",
        "No",
        "ON",
        "oFF",
        "y",
        "n",
        "~",
        "null",
        "NULL",
        "nULL",
        "",
        "<<",
        "<",
        "=",
        "==",
        "!",
        "&",
        "*",
        "0",
        "-0",
        "00",
        "08",
        "0_7",
        "0b101",
        "0b2",
        "0x1F",
        "0x",
        "0xg",
        "+12_345",
        "1:30",
        "1:60",
        "0:30",
        "1.0",
        "1.",
        ".5",
        "-.5",
        "+.inf",
        ".Inf",
        "-.nan",
        ".NaN",
        "1e5",
        "1.0e5",
        "1.0e+5",
        "1.0E-5",
        "._",
        "1:30.5",
        "1.2.3",
        "1.26",
        "3.11",
        "2.1.0",
        "12.1",
        "2024-01-01",
        "2024-1-1",
        "2024-01-1",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10 -5",
        "2001-12-15T02:59:43.1Z",
        "2001-12-14 21:59:43",
        "2001-12-1421:59:43",
        "2001-1-1 1:00:00",
        "2001-1-1",
        "2001-12-14T1:59:43",
        "2001-12-14T21:5:43",
        "١٢",
        "1١",
        "1١.5",
        "1.5١",
        "py311h64a7726_0",
    )
    wrong = [
        (text, implicit_type(text), _pyyaml_type(text))
        for text in cases
        if implicit_type(text) != _pyyaml_type(text)
    ]
    assert wrong == []
    assert implicit_type("1.26") == "float" and implicit_type("1.26.4") is None


def test_writing_yaml_imports_no_pyyaml() -> None:
    """Rendering a lock or an environment.yml needs no PyYAML (its import is ~10 ms of every `lock`)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from envguard.formats.yaml import dump\n"
        "dump({'a': ['1.26', 'yes', '2024-01-01', 'numpy=1.26.4', {'b': None}]})\n"
        "print('yaml' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
