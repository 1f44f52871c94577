"""envguard's extras in conda-lock's custom_metadata (pure): every encoding reads back to what was written."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envguard.formats.condalock import meta
from envguard.model import FINGERPRINT_FIELDS, Fingerprints, PipOrigin, VirtualPackage


def test_virtual_packages_sorted_and_round_trip() -> None:
    packages = (VirtualPackage("__glibc", "2.28"), VirtualPackage("__cuda", "12.1"))
    text = meta.encode_virtual(packages)
    assert text == "__cuda=12.1=0,__glibc=2.28=0"
    assert meta.decode_virtual(text) == tuple(sorted(packages, key=lambda v: v.name))


@given(st.dictionaries(st.sampled_from(FINGERPRINT_FIELDS), st.text(min_size=1, max_size=20)))
def test_fingerprints_round_trip_through_the_one_field_list(values: dict[str, str]) -> None:
    original = Fingerprints(**values, cuda_arch_list=("sm_80", "sm_90a"))
    assert meta.decode_fingerprints(meta.encode_fingerprints(original)) == original


def test_pip_origins_round_trip_and_reject_non_objects() -> None:
    origins = {
        "pkg": PipOrigin(url="https://host/r.git", vcs="git", commit_id="a" * 40),
        "ed": PipOrigin("file:///x", True),
    }
    assert meta.decode_origins(meta.encode_origins(origins)) == origins
    with pytest.raises(ValueError, match="JSON object"):
        meta.decode_origins("[1]")
    assert meta.platform_key("linux-64", meta.FIELD_VIRTUAL) == "envguard.linux-64.virtual_packages"
