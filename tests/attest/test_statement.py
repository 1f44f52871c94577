"""The attestation's statement (pure): manifest lines, the statement read back, and anything else refused
as bad input, never a traceback."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envguard.attest.statement import (
    PREDICATE_TYPE,
    Predicate,
    digest_of,
    manifest,
    manifest_changes,
    payload,
    read_statement,
    statement,
)
from envguard.errors import BadInputError
from envguard.model import Package, PipOrigin, make_environment

NUMPY = Package("conda", "numpy", "1.26.4", "py311h_0", subdir="linux-64", sha256="ab" * 32, md5="cd" * 16)
OLD = Package("conda", "zlib", "1.2", "h_0", subdir="linux-64", md5="ef" * 16)
GIT = Package("pip", "My_Pkg", "2.0", origin=PipOrigin(url="https://x/y.git", vcs="git", commit_id="0123"))


def predicate(*packages: Package) -> Predicate:
    env = make_environment(kind="prefix", packages=packages)
    return Predicate(
        "conda-lock.yml", "11" * 32, "linux-64", manifest(env), ({"name": "check", "status": "ok"},)
    )


def test_manifest_lines_name_the_archive_digest_and_nothing_of_the_prefix() -> None:
    env = make_environment(kind="prefix", prefix="/somewhere", packages=[GIT, OLD, NUMPY])
    assert manifest(env) == (
        f"conda linux-64/numpy-1.26.4-py311h_0 sha256:{'ab' * 32}",
        f"conda linux-64/zlib-1.2-h_0 md5:{'ef' * 16}",
        "pypi my-pkg==2.0 git@0123",
    )


def test_a_statement_reads_back_and_its_subjects_are_the_digests() -> None:
    data = statement(predicate(NUMPY, GIT))
    assert data["subject"][0] == {"name": "conda-lock.yml", "digest": {"sha256": "11" * 32}}
    assert data["subject"][1]["digest"]["sha256"] == digest_of(data["predicate"]["manifest"]["entries"])
    attested = read_statement(payload(data), "att.json")
    assert attested.lock_sha256 == "11" * 32 and attested.platform == "linux-64"
    assert attested.manifest == manifest(make_environment(kind="prefix", packages=[NUMPY, GIT]))


def test_foreign_and_inconsistent_statements_are_bad_input() -> None:
    good = statement(predicate(NUMPY))
    other = {**good, "predicateType": "https://slsa.dev/provenance/v1"}
    edited = json.loads(json.dumps(good))
    edited["predicate"]["manifest"]["entries"].append("pypi six==1.16.0")  # the subject no longer matches
    cases = {
        b"not json": "not JSON",
        payload({**good, "_type": "https://in-toto.io/Statement/v0.1"}): "not an in-toto Statement v1",
        payload(other): "not an envguard environment attestation",
        payload({**good, "subject": []}): "malformed",
        payload(edited): "does not hash to its subject",
    }
    for data, words in cases.items():
        with pytest.raises(BadInputError, match=words):
            read_statement(data, "att.json")
    assert PREDICATE_TYPE.endswith("/v1")


@given(
    st.binary(max_size=300)
    | st.recursive(
        st.none() | st.text(max_size=5),
        lambda c: st.lists(c) | st.dictionaries(st.text(max_size=8), c),
        max_leaves=8,
    ).map(lambda v: json.dumps(v).encode())
)
def test_anything_else_is_bad_input_never_a_crash(data: bytes) -> None:
    with pytest.raises(BadInputError):
        read_statement(data, "att.json")


def test_changes_are_per_package() -> None:
    before = ("conda linux-64/numpy-1.26.4-a_0 sha256:1", "pypi six==1.16.0")
    after = ("conda linux-64/numpy-2.0.1-b_0 sha256:2", "conda noarch/extra-1-c_0 sha256:3")
    assert manifest_changes(before, after) == [
        ("conda extra", None, "conda noarch/extra-1-c_0 sha256:3"),
        ("conda numpy", before[0], after[0]),
        ("pypi six", before[1], None),
    ]


def test_sigstore_accepts_the_statement_it_would_sign_keyless() -> None:
    from sigstore import dsse

    signed = dsse.Statement(payload(statement(predicate(NUMPY, GIT))))  # pydantic's in-toto v1 model
    assert signed._inner.predicate_type == PREDICATE_TYPE
    assert [s.name for s in signed._inner.subjects] == ["conda-lock.yml", "envguard-manifest:linux-64"]
