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


def test_a_package_equal_in_what_views_show_is_left_out_of_both_views() -> None:
    """A live record and a lock's entry of one package differ in what no view shows (the order of `depends`,
    the build number): left out, as an equal package is (100,000 such packages once cost two whole views)."""
    live = Package("conda", "numpy", "1.26.4", "py311h0_0", 3, channel="conda-forge", depends=("b", "a"))
    locked = dataclasses.replace(live, build_number=0, depends=("a", "b"))
    a, b = Environment("prefix", packages=(live,)), Environment("conda-lock", packages=(locked,))
    view_a, view_b, _notes = compare.aligned_views(a, b)
    assert view_a["conda"] == view_b["conda"] == {}
    assert compare.exact(a, b) == _whole(a, b)


def _changed(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, tuple):
        return (*value, "y")
    return value


def test_every_field_a_view_shows_makes_a_package_differ() -> None:
    """Each field of a Package (and of its pip origin) changed alone: where the whole views differ, the
    narrowed comparison keeps the package (a field left out of compare._VIEWED would hide that change)."""
    origin = PipOrigin("https://h/x.whl", False, "git", "c" * 40, "main")
    bases = (
        Package(
            "conda", "a", "1", "b0", 1, "conda-forge", "linux-64", "https://h/a-1-b0.conda", "m", "s", "i"
        ),
        Package("pip", "a", "1", sha256="s", installer="pip", origin=origin, depends=("x",)),
    )
    for base in bases:
        variants = [
            dataclasses.replace(base, **{f.name: _changed(getattr(base, f.name))})
            for f in dataclasses.fields(Package)
            if f.name not in ("manager", "name", "origin")
        ]
        variants += [
            dataclasses.replace(
                base, origin=dataclasses.replace(origin, **{f.name: _changed(getattr(origin, f.name))})
            )
            for f in dataclasses.fields(PipOrigin)
        ]
        a = Environment("prefix", packages=(base,))
        for variant in variants:
            b = Environment("prefix", packages=(variant,))
            whole_a, whole_b, _ = compare.aligned_views(a, b, whole=True)
            if whole_a != whole_b:
                assert compare._differing_names(a, b)[base.manager] == {"a"}, variant
            assert compare.exact(a, b, engine="fast") == _whole(a, b), variant
