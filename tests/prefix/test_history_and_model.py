"""conda-meta/history folding, against conda's own files; the model's JSON round trip."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from envguard.channels import normalize, strip_credentials
from envguard.model import (
    Package,
    PipOrigin,
    RequestedSpec,
    VirtualPackage,
    from_dict,
    make_environment,
    to_dict,
)
from envguard.prefix import history


def test_real_conda_history_requested_specs(shared: Path) -> None:
    text = (shared / "reference/conda-outputs/conda_meta_history_created-small.txt").read_text()
    revisions = history.parse(text)
    assert len(revisions) == 1 and len(revisions[0].added) == 5
    assert history.requested_specs(revisions) == {
        "pytorch": "pytorch",
        "zlib": "zlib",
        "numpy": "numpy[version='<2']",
    }


def test_bracket_specs_and_old_format(shared: Path) -> None:
    corpus = shared / "corpus/conda_meta"
    new = history.requested_specs(
        history.parse(
            (corpus / "conda__conda__tests_data_env_metadata_envpy313tosx_whl_conda-meta_history").read_text()
        )
    )
    assert new["python_abi"] == "python_abi[build=*_cp313t]" and new["python"] == "python=3.13"
    old = history.parse((corpus / "conda__conda__tests_conda-meta_history").read_text())
    assert old and "conda-3.19.0-py27_0" in old[0].added


def test_remove_specs_drop_requests() -> None:
    text = (
        "==> 2024-01-01 00:00:00 <==\n# update specs: ['numpy', 'scipy']\n==> 2024-01-02 00:00:00 <==\n# "
        "remove specs: ['scipy']\n"
    )
    assert history.requested_specs(history.parse(text)) == {"numpy": "numpy"}


def test_channel_normalisation_strips_credentials() -> None:
    assert (
        strip_credentials("https://u:p@conda.anaconda.org/t/tk-1/private/linux-64/x.conda")
        == "https://conda.anaconda.org/private/linux-64/x.conda"
    )
    assert normalize("https://conda.anaconda.org/conda-forge/") == "conda-forge"
    assert normalize("https://repo.anaconda.com/pkgs/main/linux-64") == "pkgs/main"
    assert normalize("file:///srv/channel/") == "file:///srv/channel"


_text = st.text(  # printable: control characters are refused where read (issue 28)
    alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF, exclude_categories=("Cc",)), max_size=12
)
_pkg = st.builds(
    Package,
    manager=st.sampled_from(["conda", "pip"]),
    name=_text,
    version=_text,
    build=_text,
    build_number=st.integers(0, 1000),
    origin=st.one_of(st.none(), st.builds(PipOrigin, url=_text, editable=st.booleans())),
    depends=st.lists(_text, max_size=3).map(tuple),
)


@given(st.lists(_pkg, max_size=6), st.lists(st.builds(VirtualPackage, name=_text, version=_text), max_size=3))
def test_property_snapshot_json_round_trip(packages: list[Package], virtual: list[VirtualPackage]) -> None:
    env = make_environment(
        kind="prefix",
        packages=packages,
        virtual_packages=virtual,
        requested=(RequestedSpec("conda", "numpy"),),
        channels=("conda-forge",),
    )
    again = from_dict(json.loads(json.dumps(to_dict(env))))
    assert again == env
