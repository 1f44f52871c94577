"""The exact comparison builds views only of the packages that differ: for any pair of environments its
leaves and changes are those of the whole views (optional fields one side lacks, unrecorded local pip
origins, duplicate names, one-sided packages, pip and conda of the same name)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from envguard.diff import compare
from envguard.diff.changes import Diff
from envguard.model import LOCAL_ORIGIN, Environment, Package, PipOrigin

_short = st.sampled_from(["", "1", "2"])
_origin = st.one_of(
    st.none(),
    st.builds(
        PipOrigin,
        url=st.sampled_from(["", LOCAL_ORIGIN, "file:///src/x", "https://h/x.whl"]),
        editable=st.booleans(),
        vcs=st.sampled_from(["", "git"]),
        commit_id=_short,
    ),
)
_package = st.one_of(
    st.builds(
        Package,
        manager=st.just("conda"),
        name=st.sampled_from(["a", "b", "c", "d"]),
        version=_short,
        build=_short,
        channel=st.sampled_from(["", "conda-forge", "defaults"]),
        subdir=_short,
        md5=_short,
        sha256=_short,
        depends=st.tuples() | st.tuples(st.just("x")),
    ),
    st.builds(
        Package,
        manager=st.just("pip"),
        name=st.sampled_from(["a", "b", "e"]),
        version=_short,
        sha256=_short,
        origin=_origin,
    ),
)
_env = st.builds(
    Environment,
    kind=st.just("prefix"),
    platform=st.sampled_from([None, "linux-64"]),
    python=st.sampled_from([None, "3.11.7"]),
    packages=st.lists(_package, max_size=8).map(tuple),
)


def _whole(a: Environment, b: Environment) -> Diff:
    """`compare.exact` as it was before narrowing: every package in both views."""
    view_a, view_b, notes = compare.aligned_views(a, b, whole=True)
    leaves = compare.fast_leaves(view_a, view_b)
    changes = compare._changes(leaves, view_a, view_b) + compare.both_manager_hazards(a, b)
    return Diff(compare._label(a), compare._label(b), "exact", tuple(changes), tuple(notes))


@settings(max_examples=400, deadline=None)
@given(_env, _env)
def test_narrowed_views_give_the_whole_views_changes(a: Environment, b: Environment) -> None:
    assert compare.exact(a, b, engine="fast") == _whole(a, b)


@settings(max_examples=100, deadline=None)
@given(_env, _env)
def test_the_deepdiff_engine_agrees_on_narrowed_views(a: Environment, b: Environment) -> None:
    assert compare.exact(a, b, engine="deepdiff") == _whole(a, b)


def test_equal_packages_are_left_out_of_both_views() -> None:
    same = Package("conda", "numpy", "1.26.4", "py311h0_0", channel="conda-forge")
    a = Environment("prefix", packages=(same, Package("conda", "six", "1.16.0")))
    b = dataclasses.replace(a, packages=(same, Package("conda", "six", "1.17.0")))
    view_a, view_b, _notes = compare.aligned_views(a, b)
    assert set(view_a["conda"]) == set(view_b["conda"]) == {"six"}
    whole_a, _whole_b, _ = compare.aligned_views(a, b, whole=True)
    assert set(whole_a["conda"]) == {"numpy", "six"}
